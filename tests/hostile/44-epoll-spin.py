# expected: epoll_wait with timeout 0 in a loop for ever, over a pipe and an eventfd that never become ready; -t 1 ends it (124)
import os, select
r, w = os.pipe()
e = os.eventfd(0)
ep = select.epoll()
ep.register(r, select.EPOLLIN)
ep.register(e, select.EPOLLIN)
print("spinning", flush=True)
while True:
    ep.poll(0)
