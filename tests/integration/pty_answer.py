#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# pty_answer.py ANSWERS COMMAND [ARGS...]: runs COMMAND on a new
# pseudo-terminal (its controlling terminal, as a person's shell would give
# it), answers each question it asks (output ending in "?" and a space)
# with the next of ANSWERS (separated by ","; "^C" types a Ctrl-C), copies what it showed to
# stdout and exits with its status.  No more answers, or 60 s without
# one, ends it (killed: status 137), so a test never hangs.
import os, pty, select, sys, time

answers = [a for a in sys.argv[1].split(",") if a]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
shown = b""
deadline = time.monotonic() + 60
while True:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the terminal's last process is gone
            break
        if not data:
            break
        shown += data
        deadline = time.monotonic() + 60
        if shown.endswith(b"? "):
            if not answers:
                os.kill(pid, 9)
                break
            a = answers.pop(0)
            os.write(fd, b"\x03" if a == "^C" else (a + "\n").encode())
    elif time.monotonic() > deadline:
        os.kill(pid, 9)
        break
_, status = os.waitpid(pid, 0)
sys.stdout.write(shown.decode(errors="replace").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 137)
