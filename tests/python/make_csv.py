"""make_csv.py FILE ROWS: a deterministic CSV for pandas_job.py (time,
group, value, other), with nothing but the standard library."""
import datetime
import sys

path, rows = sys.argv[1], int(sys.argv[2])
s = 12345
t0 = datetime.datetime(2024, 1, 1)
with open(path, "w") as f:
    f.write("time,group,value,other\n")
    for i in range(rows):
        s = (s * 1103515245 + 12345) % 2147483648
        t = t0 + datetime.timedelta(minutes=7 * i)
        f.write(f"{t:%Y-%m-%d %H:%M:%S},g{s % 5},{(s % 10000) / 100},{(s // 7 % 1000) / 10 + i % 50}\n")
