# expected: /proc exists and shows only the guest's own state (maps names only the guest's python and [stack]/[heap], /proc/1/environ only the guest's variables, none of the host's strings given reversed in argv in any file or link, no mem/kcore); every change is EROFS; /sys is absent; exit 0
import errno, os, sys
print(os.path.exists("/proc"), os.path.exists("/sys"))
print(sorted(os.listdir("/proc")))
names = {line.split(None, 5)[5].strip() for line in open("/proc/self/maps") if len(line.split(None, 5)) == 6}
print("maps:", "/usr/bin/python" in names, "[stack]" in names, sorted(names - {"/usr/bin/python", "[stack]", "[heap]"}))
env = open("/proc/1/environ", "rb").read().split(b"\0")
print("environ:", sorted(e.split(b"=")[0].decode() for e in env if e))
for path in ["/proc/self/mem", "/proc/kcore", "/proc/self/root", "/proc/sysrq-trigger",
             "/sys/kernel/mm", "/sys/firmware/dmi/tables/DMI"]:
    try:
        open(path, "rb").read()
        print(path, "READ")
    except OSError as e:
        print(path, type(e).__name__)
changes = [lambda: open("/proc/self/status", "w"), lambda: open("/proc/sys/kernel/hostname", "w"),
           lambda: open("/proc/new", "w"), lambda: os.mkdir("/proc/d"), lambda: os.unlink("/proc/cpuinfo"),
           lambda: os.symlink("/etc", "/proc/l"), lambda: os.chmod("/proc/self/maps", 0o666),
           lambda: os.rename("/proc/version", "/proc/v"), lambda: os.truncate("/proc/meminfo", 0)]
errs = []
for change in changes:
    try:
        change()
        errs.append("done")
    except OSError as e:
        errs.append(errno.errorcode[e.errno])
print("changes:", sorted(set(errs)))
# The host's strings, given reversed (no copy of them is in the guest): in no file, no link.
host = [s[::-1].encode() for s in sys.argv[1:]]
files = found = control = 0
for top, dirs, leaves in os.walk("/proc"):
    for name in leaves:
        path = os.path.join(top, name)
        try:
            data = os.readlink(path).encode() if os.path.islink(path) else open(path, "rb").read()
        except OSError:
            continue
        files += 1
        found += sum(h in data for h in host)
        control += b"/usr/bin/python" in data  # the search finds what is there: exe, maps
print("host strings:", found, "in", "over 20" if files > 20 else files, "files and links; control:", control >= 2)
print(sorted(os.listdir("/")), sorted(os.listdir("/dev")))
