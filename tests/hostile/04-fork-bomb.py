# expected: every os.fork() raises OSError (ENOSYS): prints "fork failed 1000 times: errno 38", exit 0
import os
fails, errnos = 0, set()
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError as e:
        fails += 1
        errnos.add(e.errno)
        continue
    if pid == 0:
        os._exit(0)
    print("fork succeeded:", pid)
    raise SystemExit(1)
print("fork failed %d times: errno %s" % (fails, ",".join(map(str, sorted(errnos)))))
