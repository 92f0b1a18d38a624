# expected: a pipe nobody reads fills (64 KiB) and the writer blocks for ever; another thread keeps printing; -t 2 ends the run (124)
import os, threading, time
r, w = os.pipe()
def tick():
    while True:
        print("tick", flush=True)
        time.sleep(0.2)
threading.Thread(target=tick, daemon=True).start()
n = 0
while True:
    n += os.write(w, b"x" * 4096)
