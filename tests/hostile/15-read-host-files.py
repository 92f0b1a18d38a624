# expected: host files do not exist in the guest: each open prints FileNotFoundError; /etc holds only the guest's own accounts and names; exit 0
for path in ["/etc/shadow", "/root/.ssh/id_rsa", "/etc/ssh/ssh_host_rsa_key",
             "/dev/kvm", "/dev/mem", "/dev/sda", "/var/log/syslog", "/home", "/etc/machine-id"]:
    try:
        with open(path, "rb") as f:
            print(path, "READ", len(f.read()))
    except OSError as e:
        print(path, type(e).__name__)
print("passwd:", [line.split(":")[0] for line in open("/etc/passwd")])
print("hostname:", open("/etc/hostname").read().strip())
