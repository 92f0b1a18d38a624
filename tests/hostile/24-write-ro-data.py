# expected: every write to the --ro dataset fails with EROFS: 10 lines ending "EROFS", the file still reads back, exit 0
import errno, os
def attempt(what, f):
    try:
        f()
        print(what, "succeeded")
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno))
attempt("create", lambda: open("/data/ds/new.txt", "w"))
attempt("append", lambda: open("/data/ds/a.txt", "a"))
attempt("open r+", lambda: open("/data/ds/a.txt", "r+"))
attempt("truncate", lambda: os.truncate("/data/ds/a.txt", 0))
attempt("unlink", lambda: os.unlink("/data/ds/a.txt"))
attempt("mkdir", lambda: os.mkdir("/data/ds/d"))
attempt("rename", lambda: os.rename("/data/ds/a.txt", "/data/ds/b.txt"))
attempt("chmod", lambda: os.chmod("/data/ds/a.txt", 0o777))
attempt("utime", lambda: os.utime("/data/ds/a.txt", (0, 0)))
attempt("symlink", lambda: os.symlink("/etc/passwd", "/data/ds/l"))
print(open("/data/ds/a.txt").read().strip())
