# expected: a thread bomb: threads that wait for ever are started until start() fails; prints
# "bomb: RuntimeError after 255 threads" (the default --pids 256, the main thread counted), exit 0
import threading
n = 0
never = threading.Event()
try:
    while True:
        threading.Thread(target=never.wait, daemon=True).start()
        n += 1
except RuntimeError as e:
    print("bomb: RuntimeError after", n, "threads:", e)
