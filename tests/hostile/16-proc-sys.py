# expected: /proc and /sys do not exist: prints "False False", FileNotFoundError for each probe, exit 0
import os
print(os.path.exists("/proc"), os.path.exists("/sys"))
for path in ["/proc/self/maps", "/proc/self/mem", "/proc/1/environ", "/proc/cpuinfo",
             "/sys/kernel/mm", "/sys/firmware/dmi/tables/DMI"]:
    try:
        open(path, "rb").read()
        print(path, "READ")
    except OSError as e:
        print(path, type(e).__name__)
print(sorted(os.listdir("/")), sorted(os.listdir("/dev")))
