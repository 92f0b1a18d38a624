# expected: every network socket family fails with OSError errno 97 (EAFNOSUPPORT): prints "97" four times (INET, INET6, NETLINK, connect); an AF_UNIX socket is made but reaches nothing outside the VM (a host path: ENOENT, an abstract name: ECONNREFUSED), exit 0
import socket
AF_NETLINK = 16
for fam, typ in [(socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_DGRAM),
                 (AF_NETLINK, socket.SOCK_RAW)]:
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
for addr in ["/run/systemd/private", "/var/run/docker.sock", "/tmp/.X11-unix/X0", "\0/tmp/dbus-abstract"]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(addr)
        print("connected", repr(addr))
    except OSError as e:
        print(e.errno)
