# expected: with -t 1 husk exits 124 after ~1 s, and husk itself uses little CPU (the host thread sleeps)
import time
time.sleep(1e9)
print("woke up")
