# expected: host files do not exist in the guest: each open prints FileNotFoundError, exit 0
for path in ["/etc/shadow", "/etc/passwd", "/root/.ssh/id_rsa", "/etc/hostname",
             "/dev/kvm", "/dev/mem", "/dev/sda", "/var/log/syslog", "/home"]:
    try:
        with open(path, "rb") as f:
            print(path, "READ", len(f.read()))
    except OSError as e:
        print(path, type(e).__name__)
