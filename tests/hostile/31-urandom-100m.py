# expected: reading 100 MiB from /dev/urandom works: prints "104857600" and "ok", exit 0
n, zeros = 0, 0
with open("/dev/urandom", "rb", buffering=0) as f:
    while n < 100 << 20:
        b = f.read(1 << 20)
        if not b:
            break
        n += len(b)
        zeros += b.count(0)
print(n)
print("ok" if 300000 < zeros < 520000 else "suspicious: %d zero bytes" % zeros)
