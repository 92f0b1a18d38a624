# expected: fork until it fails: the guest's process limit (EAGAIN) or its memory (ENOMEM, each child a copy
# of Python) stops it, the kernel fine; every child is reaped; prints "contained: some children, then EAGAIN|ENOMEM; all reaped", exit 0
import errno, os
r, w = os.pipe()
kids, err = [], None
while len(kids) < 10000:
    try:
        pid = os.fork()
    except OSError as e:
        err = e.errno
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)  # until the parent closes its end
        os._exit(0)
    kids.append(pid)
os.close(w)
reaped = sum(os.waitpid(pid, 0)[1] == 0 for pid in kids)
print("contained: %s children, then %s; %s reaped" % ("some" if len(kids) >= 5 else len(kids),
      errno.errorcode.get(err, err), "all" if reaped == len(kids) else reaped))
