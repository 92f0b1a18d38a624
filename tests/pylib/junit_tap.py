# SPDX-License-Identifier: GPL-2.0-only
"""pytest's JUnit XML report as TAP (prove runs the .t that calls this):
one line per test case, failures' messages as comments; no report at all
is a bail-out with pytest's own output."""
import sys
import xml.etree.ElementTree as ET

report, log = sys.argv[1], sys.argv[2]
try:
    cases = list(ET.parse(report).getroot().iter("testcase"))
except (OSError, ET.ParseError):
    print("Bail out! pytest wrote no report; its output:")
    with open(log, errors="replace") as f:
        for line in f:
            print("# " + line.rstrip())
    sys.exit(1)
print(f"1..{len(cases)}")
bad = 0
for n, case in enumerate(cases, 1):
    name = f"{case.get('classname', '')}.{case.get('name')}"
    problem = case.find("failure")
    if problem is None:
        problem = case.find("error")
    skipped = case.find("skipped")
    if problem is not None or skipped is not None:  # a skip is a failure here: no test is skipped silently
        bad += 1
        print(f"not ok {n} - {name}")
        text = (problem if problem is not None else skipped).get("message", "") + "\n" + \
            ((problem if problem is not None else skipped).text or "")
        for line in text.strip().splitlines()[-30:]:
            print("#   " + line)
    else:
        print(f"ok {n} - {name}")
sys.exit(1 if bad else 0)
