# expected: every socket family fails with OSError errno 97 (EAFNOSUPPORT): prints "97" five times (INET, INET6, UNIX, NETLINK, connect), exit 0
import socket
AF_NETLINK = 16
for fam, typ in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_DGRAM),
                 (socket.AF_UNIX, socket.SOCK_STREAM), (AF_NETLINK, socket.SOCK_RAW)]:
    try:
        socket.socket(fam, typ)
        print("socket created")
    except OSError as e:
        print(e.errno)
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2)
    print("connected")
except OSError as e:
    print(e.errno)
