"""A data job: aggregate a CSV dataset from /data/data into /workdir/report.json."""
import csv
import hashlib
import json
import os
import statistics
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "/data/data/measurements.csv"
groups = {}
values = []
with open(src, newline="") as f:
    for row in csv.DictReader(f):
        v = int(row["value"])
        g = groups.setdefault(row["group"], {"count": 0, "sum": 0})
        g["count"] += 1
        g["sum"] += v
        values.append(v)

with open(src, "rb") as f:
    digest = hashlib.sha256(f.read()).hexdigest()

report = {
    "rows": len(values),
    "groups": groups,
    "median": statistics.median(values),
    "sha256": digest,
}
with open("report.json", "w") as f:
    json.dump(report, f, indent=1, sort_keys=True)
try:
    open("/data/data/intruder.txt", "w")
    print("write under /data: allowed")
except OSError as e:
    print("write under /data:", e.errno)
print("rows", len(values), "cwd", os.getcwd())
