/* SPDX-License-Identifier: GPL-2.0-only */
/* Advisory file locks: fcntl's POSIX record locks and flock. */
#ifndef GUEST_LOCK_H
#define GUEST_LOCK_H

struct file;
/* F_GETLK, F_SETLK, F_SETLKW with a struct flock at arg. */
long lock_fcntl(struct file *f, long cmd, void *arg);
/* flock(2): LOCK_SH, LOCK_EX, LOCK_UN, with LOCK_NB. */
long lock_flock(struct file *f, long op);
/* A process closed an fd of f's file: its record locks on it go (POSIX). */
void lock_fd_closed(const struct file *f, int pid);
/* f's last close: its flock goes. */
void lock_file_released(const struct file *f);
/* A process ended: its record locks go. */
void lock_process_ended(int pid);
#endif
