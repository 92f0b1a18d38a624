# expected: with -m 64M the allocations end in MemoryError, which the program catches: "MemoryError after N MiB" (N < 64), exit 0
chunks = []
try:
    while True:
        chunks.append(bytearray(1 << 20))
except MemoryError:
    n = len(chunks)
    chunks = None
    print("MemoryError after %d MiB" % n)
