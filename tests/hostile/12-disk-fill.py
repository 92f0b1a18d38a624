# expected: with --disk 32M writing /workdir/fill.bin ends in ENOSPC: "ENOSPC after N bytes", exit 0; the N bytes come back
import errno
chunk = b"\xab" * (1 << 20)
written = 0
try:
    with open("fill.bin", "wb", buffering=0) as f:
        while True:
            written += f.write(chunk)
except OSError as e:
    print("%s after %d bytes" % (errno.errorcode.get(e.errno, e.errno), written))
