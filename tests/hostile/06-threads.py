# expected: threading.Thread().start() and _thread.start_new_thread raise RuntimeError; prints two lines, exit 0
import _thread
import threading
try:
    threading.Thread(target=lambda: None).start()
    print("thread started")
except RuntimeError as e:
    print("Thread.start: RuntimeError:", e)
try:
    _thread.start_new_thread(lambda: None, ())
    print("thread started")
except RuntimeError as e:
    print("start_new_thread: RuntimeError:", e)
