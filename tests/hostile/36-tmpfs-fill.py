# expected: with -m 64M the guest's RAM /tmp fills up with ENOSPC (nothing reaches the host's /tmp), then allocations fail with MemoryError: exit 0
import errno
n = 0
try:
    with open("/tmp/husk-hostile-tmpfill", "wb", buffering=0) as f:
        while True:
            n += f.write(b"z" * (1 << 20))
except OSError as e:
    print("/tmp: %s after %d MiB" % (errno.errorcode.get(e.errno, e.errno), n >> 20))
hold = []
try:
    while True:
        hold.append(bytearray(1 << 20))
except MemoryError:
    hold = None
    print("then MemoryError")
