#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""quota_fs.py BACKING MOUNTPOINT LIMIT: a FUSE file system passing through
to BACKING that answers EDQUOT once LIMIT bytes were written, as a user's
disk quota would (this machine's kernel has no quota support).  For the
write-back's tests; runs in the foreground until unmounted."""
import errno
import os
import sys

from fusepy import FUSE, FuseOSError, Operations


class QuotaFS(Operations):
    def __init__(self, root, limit):
        self.root, self.limit, self.used = root, limit, 0

    def _p(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def getattr(self, path, fh=None):
        st = os.lstat(self._p(path))
        keys = ("st_mode", "st_ino", "st_nlink", "st_uid", "st_gid", "st_size",
                "st_atime", "st_mtime", "st_ctime")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._p(path))

    def readlink(self, path):
        return os.readlink(self._p(path))

    def mkdir(self, path, mode):
        os.mkdir(self._p(path), mode)

    def rmdir(self, path):
        os.rmdir(self._p(path))

    def unlink(self, path):
        os.unlink(self._p(path))

    def symlink(self, target, source):
        os.symlink(source, self._p(target))

    def link(self, target, source):
        os.link(self._p(source), self._p(target))

    def rename(self, old, new):
        os.rename(self._p(old), self._p(new))

    def chmod(self, path, mode):
        os.chmod(self._p(path), mode, follow_symlinks=False)

    def chown(self, path, uid, gid):
        os.chown(self._p(path), uid, gid, follow_symlinks=False)

    def utimens(self, path, times=None):
        os.utime(self._p(path), ns=None if times is None else
                 (int(times[0] * 1e9), int(times[1] * 1e9)), follow_symlinks=False)

    def create(self, path, mode, fi=None):
        return os.open(self._p(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path, flags):
        return os.open(self._p(path), flags)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        if self.used + len(data) > self.limit:
            raise FuseOSError(errno.EDQUOT)
        self.used += len(data)
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self._p(path), length)

    def release(self, path, fh):
        os.close(fh)

    def statfs(self, path):
        st = os.statvfs(self._p(path))
        return {k: getattr(st, k) for k in ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail",
                                            "f_files", "f_ffree", "f_favail", "f_namemax")}


if __name__ == "__main__":
    FUSE(QuotaFS(sys.argv[1], int(sys.argv[3])), sys.argv[2], foreground=True, allow_other=True)
