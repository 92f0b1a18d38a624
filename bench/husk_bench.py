#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""husk bench: start-up latency of husk and the other sandboxes on this
machine, measured the same way, in turns (A B C A B C ...), after warm-ups.

Started by `husk bench` (vmm/main.c execs it with HUSK_BIN set); see
`husk bench --help`.  Each run is a posix_spawn of the sandbox's command,
timed from before the spawn to after waitpid, its stdout checked against
the workload's expected output: a run that fails, or prints something
else, is a failure, and a sandbox with failures gets no ratio.  husk's own
phases come from its --stats line (timestamps husk takes itself)."""
import argparse
import json
import os
import platform
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HUSK = os.environ.get("HUSK_BIN") or shutil.which("husk") or "husk"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "husk-bench/1"
# husk's phases as --stats gives them (vmm/audit.h), its run split at the
# program's first instruction ("guest_start": the guest kernel's boot or
# restore; "program": to its exit), then "process": the rest of the run as
# timed from outside (exec, namespaces, exit).
PHASES = ["prepare", "create", "load", "guest_start", "program", "destroy", "write_back", "process"]

# name: (husk's program and args, the native command, the expected stdout)
WORKLOADS = {
    "print": (["python", "-c", "print(1+1)"], ["/usr/bin/python3", "-c", "print(1+1)"], b"2\n"),
    "import": (["python", "-c", "import json, re, datetime, pathlib; print(len(json.dumps([1])))"],
               ["/usr/bin/python3", "-c", "import json, re, datetime, pathlib; print(len(json.dumps([1])))"], b"3\n"),
    "lua": (["lua", "-e", "print(1+1)"], ["/usr/bin/lua5.4", "-e", "print(1+1)"], b"2\n"),
    "io": (["python", "-c", "d = b'x' * (1 << 20)\nopen('f', 'wb').write(d)\nprint(open('f', 'rb').read() == d)"],
           ["/usr/bin/python3", "-c", "d = b'x' * (1 << 20)\nopen('f', 'wb').write(d)\nprint(open('f', 'rb').read() == d)"],
           b"True\n"),
}

# The peers, in the order they run; each: how to wrap the native command,
# the isolation it gets, how to ask its version.
PEERS = ["native", "bwrap", "unshare", "firejail", "runsc-ptrace", "runsc-kvm", "qemu-microvm"]
ISOLATION = {
    "husk": "a KVM virtual machine (own guest kernel); the VMM in pid, mount, net, ipc, uts namespaces, seccomp, an empty root",
    "native": "none",
    "bwrap": "namespaces: user, pid, net, ipc, uts, cgroup, mount (a read-only bind of /)",
    "unshare": "namespaces: mount, uts, ipc, net, pid (as root: no user namespace)",
    "firejail": "namespaces: mount, pid, net; seccomp, capabilities dropped (firejail's defaults, no profile)",
    "runsc-ptrace": "gVisor: a user-space kernel (Sentry), syscalls caught with ptrace; namespaces, seccomp",
    "runsc-kvm": "gVisor: a user-space kernel (Sentry) on KVM; namespaces, seccomp",
    "qemu-microvm": "a KVM virtual machine (QEMU microvm, a Debian kernel)",
}
VERSION_CMD = {
    "bwrap": ["bwrap", "--version"], "firejail": ["firejail", "--version"], "unshare": ["unshare", "--version"],
    "runsc-ptrace": ["runsc", "--version"], "runsc-kvm": ["runsc", "--version"],
    "qemu-microvm": ["qemu-system-x86_64", "--version"], "native": ["/usr/bin/python3", "--version"],
}


def kernel_for_qemu():
    """The Debian kernel `make bench-deps` unpacked (build/bench-deps)."""
    d = os.path.join(ROOT, "build", "bench-deps")
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.startswith("vmlinuz-"):
            return os.path.join(d, name)
    return None


def initrd_for_qemu(tmp):
    """An initramfs whose /init is husk's static lua (PID 1 runs the
    workload's script, given after "--" on the kernel's command line)."""
    lua = os.path.join(os.path.dirname(os.path.realpath(HUSK)), "build", "images", "lua")
    if not os.path.exists(lua):
        lua = os.path.join(os.path.dirname(os.path.realpath(HUSK)), "..", "lib", "husk", "lua")
    d = os.path.join(tmp, "initrd")
    os.makedirs(d, exist_ok=True)
    shutil.copy(lua, os.path.join(d, "init"))
    out = os.path.join(tmp, "initrd.cpio")
    with open(out, "wb") as f:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], input=b"init\n", cwd=d, stdout=f, check=True)
    return out


USER_PEERS = {}  # --peer NAME=COMMAND: COMMAND's words, "{}" where the native command goes


def command(sandbox, workload, tmp):
    """The exact command of a sandbox for a workload, or (None, reason)."""
    program, native, _ = WORKLOADS[workload]
    wd = os.path.join(tmp, "wd-" + sandbox)
    if sandbox in USER_PEERS:
        words = USER_PEERS[sandbox]
        i = words.index("{}") if "{}" in words else len(words)
        return words[:i] + native + words[i + 1:], None
    if sandbox in ("husk-snapshot", "husk-cold"):
        cmd = [HUSK, "run", "--stats"] + (["--cold"] if sandbox == "husk-cold" else [])
        if workload == "io":
            cmd += ["-w", wd]
        return cmd + program, None
    if not os.path.exists(native[0]):
        return None, f"{native[0]} is not installed (make bench-deps)"
    tool = {"bwrap": "bwrap", "unshare": "unshare", "firejail": "firejail", "runsc-ptrace": "runsc",
            "runsc-kvm": "runsc", "qemu-microvm": "qemu-system-x86_64"}.get(sandbox)
    if tool and not shutil.which(tool):
        return None, f"{tool} is not installed (make bench-deps installs Debian's)"
    if sandbox == "native":
        return native, None
    if sandbox == "bwrap":
        return ["bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc",
                "/proc", "--bind", wd, wd, "--chdir", wd] + native, None
    if sandbox == "unshare":
        return ["unshare", "--mount", "--uts", "--ipc", "--net", "--pid", "--fork", "--mount-proc"] + native, None
    if sandbox == "firejail":
        return ["firejail", "--quiet", "--noprofile", "--net=none", "--private-tmp"] + native, None
    if sandbox.startswith("runsc"):
        return ["runsc", "--platform=" + sandbox.split("-")[1], "--network=none", "do"] + native, None
    if sandbox == "qemu-microvm":
        if workload != "lua":
            return None, "runs the lua workload only (its init is husk's static lua: no Python in its initramfs)"
        kernel = kernel_for_qemu()
        if not kernel:
            return None, "no Debian kernel in build/bench-deps (make bench-deps)"
        return ["qemu-system-x86_64", "-M", "microvm", "-accel", "kvm", "-cpu", "host", "-m", "256", "-nodefaults",
                "-no-user-config", "-nographic", "-serial", "stdio", "-no-reboot", "-kernel", kernel, "-initrd",
                initrd_for_qemu(tmp), "-append", "console=ttyS0 quiet loglevel=0 panic=-1 -- " + " ".join(program[1:])
                ], None
    return None, "unknown peer (known: " + ", ".join(PEERS) + ")"


def run_once(cmd, cwd, timeout):
    """One run: (seconds, ok, stdout, stderr), timed from before the spawn
    to the exit as a pidfd reports it (no polling: a wait with a timeout
    would sleep in steps).  stdout and stderr go to memory files, read
    after: a pipe never stalls a run, no disk file is made per run."""
    out, err = os.memfd_create("out"), os.memfd_create("err")
    null = os.open(os.devnull, os.O_RDONLY)
    actions = [(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
    try:
        path = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0])
        if not path:
            return 0.0, False, b"", f"{cmd[0]}: not found".encode()
        here = os.getcwd()
        os.chdir(cwd)  # posix_spawn has no cwd argument here (Python 3.11)
        try:
            t = time.monotonic()
            pid = os.posix_spawn(path, cmd, os.environ, file_actions=actions)
        except OSError as e:
            return time.monotonic() - t, False, b"", str(e).encode()
        finally:
            os.chdir(here)
        pidfd = os.pidfd_open(pid)
        try:
            done = select.select([pidfd], [], [], timeout)[0]
            if not done:
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            dt = time.monotonic() - t
        finally:
            os.close(pidfd)
        got = []
        for fd in out, err:
            os.lseek(fd, 0, os.SEEK_SET)
            got.append(os.read(fd, 1 << 20))
        ok = done and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        return dt, ok, got[0], got[1] + (b"" if done else b"timed out")
    finally:
        for fd in out, err, null:
            os.close(fd)


def husk_isolation(audit):
    """The isolation husk's start record says the run got."""
    with open(audit) as f:
        iso = next(r for r in map(json.loads, f) if r.get("event") == "start")["isolation"]
    text = "a KVM virtual machine (own guest kernel); the VMM "
    text += ("in " + ", ".join(iso["namespaces"]) + " namespaces") if iso.get("namespaces") else "in no namespace"
    text += ", seccomp" + (", an empty root" if iso.get("empty_root") else "")
    return text + (f" (missing: {iso['missing']})" if iso.get("missing") else "")


def wanted(out, expect, sandbox):
    if sandbox == "qemu-microvm":  # the console carries the kernel's lines too
        return expect.strip() in out.replace(b"\r", b"").split(b"\n")
    return out == expect


PHASE_RE = re.compile(rb"husk: phases \(ms\): (.*)")
PROGRAM_RE = re.compile(rb"husk: of the run, the program's own \(ms\): ([0-9.]+)")


def husk_phases(stderr):
    m = PHASE_RE.search(stderr)
    if not m:
        return None
    p = {k: float(v) for k, v in (p.strip().split(" ") for p in m.group(1).decode().split(","))}
    prog = PROGRAM_RE.search(stderr)
    run = p.pop("run")
    p["program"] = min(run, float(prog.group(1))) if prog else 0.0
    p["guest_start"] = run - p["program"]
    return {k: p[k] for k in PHASES if k in p}


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))] if v else None


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    kvm = "none"
    if os.path.exists("/dev/kvm"):
        kvm = "kvm_pvm" if os.path.exists("/sys/module/kvm_pvm") else (
            "hardware (kvm_intel)" if os.path.exists("/sys/module/kvm_intel") else
            "hardware (kvm_amd)" if os.path.exists("/sys/module/kvm_amd") else "kvm")
    version = subprocess.run([HUSK, "--version"], capture_output=True, text=True).stdout.strip()
    return {"uname_r": platform.release(), "cpu": cpu, "cpus": os.cpu_count(), "kvm": kvm, "husk": version,
            "loadavg_before": list(os.getloadavg())}


def peer_version(sandbox):
    cmd = VERSION_CMD.get(sandbox)
    if not cmd or not shutil.which(cmd[0]):
        return None
    r = subprocess.run(cmd, capture_output=True, text=True)
    return ((r.stdout or r.stderr).strip().splitlines() or ["?"])[0]


def measure(args):
    sandboxes = ["husk-snapshot", "husk-cold"] + [p for p in args.vs if p]
    report = {"schema": SCHEMA, "machine": machine(), "runs": args.runs, "warmup": args.warmup, "workloads": []}
    tmp = tempfile.mkdtemp(prefix="husk-bench-")
    broken = {}  # sandbox: why its probe failed (not probed again for the next workload)
    try:
        for workload in args.workload:
            expect = WORKLOADS[workload][2]
            entries, order = [], []
            for s in sandboxes:
                os.makedirs(os.path.join(tmp, "wd-" + s), exist_ok=True)
                cmd, reason = command(s, workload, tmp)
                e = {"name": s, "command": cmd, "isolation": ISOLATION.get("husk" if s.startswith("husk") else s,
                                                                   "as its command says (--peer)"),
                     "version": report["machine"]["husk"] if s.startswith("husk") else peer_version(s),
                     "status": "ok", "reason": None, "samples_ms": [], "failures": 0}
                if cmd and s in broken:
                    cmd, reason = None, broken[s]
                elif cmd:  # a probe: the peer works here, in reasonable time
                    probe = cmd
                    if s.startswith("husk"):  # husk says what isolation it got, in its audit
                        audit = os.path.join(tmp, "probe.jsonl")
                        probe = cmd[:2] + ["--audit", audit] + cmd[2:]
                    dt, ok, out, err = run_once(probe, os.path.join(tmp, "wd-" + s), args.probe_timeout)
                    if ok and s.startswith("husk"):
                        e["isolation"] = husk_isolation(audit)
                        os.unlink(audit)
                    if not ok or not wanted(out, expect, s):
                        last = (err.strip().splitlines() or [b"no output"])[-1].decode(errors="replace")
                        cmd, reason = None, f"does not work here: {last[:200]}"
                        broken[s] = reason
                if not cmd:
                    e.update(status="skipped", reason=reason)
                entries.append(e)
            live = [e for e in entries if e["status"] == "ok"]
            phases = {e["name"]: [] for e in live if e["name"].startswith("husk")}
            for r in range(args.warmup + args.runs):
                for e in live:
                    dt, ok, out, err = run_once(e["command"], os.path.join(tmp, "wd-" + e["name"]), args.run_timeout)
                    if r < args.warmup:
                        continue
                    order.append([r - args.warmup, e["name"]])
                    if not ok or not wanted(out, expect, e["name"]):
                        e["failures"] += 1
                        e["last_failure"] = (err.strip().splitlines() or [b"wrong output"])[-1].decode(errors="replace")
                        continue
                    e["samples_ms"].append(dt * 1000)
                    if e["name"] in phases:
                        p = husk_phases(err)
                        if p:
                            p["process"] = max(0.0, dt * 1000 - sum(p.values()))
                            phases[e["name"]].append(p)
            native = next((e for e in live if e["name"] == "native"), None)
            for e in live:
                v = e["samples_ms"]
                if e["failures"]:
                    e["status"] = "failed"
                e.update({k: pct(v, q) for k, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))})
            for e in live:  # a ratio only between sandboxes that never failed
                ok_ratio = native and not native["failures"] and not e["failures"] and e["samples_ms"]
                e["ratio_p50"] = e["p50"] / native["p50"] if ok_ratio else None
            report["workloads"].append({
                "name": workload, "sandboxes": entries, "order": order,
                "phases_p50_ms": {name: {ph: statistics.median(x[ph] for x in runs) for ph in PHASES}
                                  for name, runs in phases.items() if runs}})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report["machine"]["loadavg_after"] = list(os.getloadavg())
    return report


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def text(report):
    m = report["machine"]
    lines = [f"husk bench: {m['husk']}, Linux {m['uname_r']}, {m['cpu']} x {m['cpus']}, KVM {m['kvm']}",
             f"load average {' '.join(f'{x:.2f}' for x in m['loadavg_before'])} before, "
             f"{' '.join(f'{x:.2f}' for x in m['loadavg_after'])} after; {report['runs']} runs each, in turns, "
             f"after {report['warmup']} warm-up rounds"]
    for w in report["workloads"]:
        lines += ["", f"workload {w['name']} (ms)   {'p50':>8} {'p90':>8} {'p99':>8} {'max':>8} {'/native':>8}  isolation"]
        for e in w["sandboxes"]:
            if e["status"] == "skipped":
                lines.append(f"  {e['name']:<18} skipped: {e['reason']}")
                continue
            ratio = "-" if e["ratio_p50"] is None else f"{e['ratio_p50']:.2f}x"
            lines.append(f"  {e['name']:<18} {fmt(e['p50']):>8} {fmt(e['p90']):>8} {fmt(e['p99']):>8} "
                         f"{fmt(e['max']):>8} {ratio:>8}  {e['isolation']}")
            if e["failures"]:
                lines.append(f"  {'':<18} {e['failures']} of {report['runs']} runs failed ({e.get('last_failure', '')[:100]}): "
                             "no ratio")
        for name, ph in w["phases_p50_ms"].items():
            total = sum(ph.values())
            bar = ", ".join(f"{k} {v:.2f}" for k, v in ph.items())
            lines.append(f"  {name} phases, p50 ms (sum {total:.2f}): {bar}")
        lines.append("  commands:")
        lines += [f"    {e['name']}: {' '.join(e['command'])}" for e in w["sandboxes"] if e["command"]]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(prog="husk bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50, help="timed runs of each sandbox (default 50)")
    ap.add_argument("--warmup", type=int, default=3, help="rounds before the timed ones (default 3)")
    ap.add_argument("--vs", default="native,bwrap,unshare,firejail,runsc-ptrace,runsc-kvm,qemu-microvm",
                    help="the peers, comma-separated (default: all; each missing or failing one is skipped with why)")
    ap.add_argument("--workload", default="print", help="print, import, lua, io (comma-separated; default print)")
    ap.add_argument("--json", help="write the report as JSON to this file")
    ap.add_argument("--plot", help="draw the CDFs and husk's phases to this .svg or .png (matplotlib)")
    ap.add_argument("--peer", action="append", default=[], metavar="NAME=COMMAND",
                    help="one more peer: COMMAND's words with {} where the workload's native command goes "
                         "(\"docker=docker run --rm -i python:3 {}\"); repeatable")
    ap.add_argument("--update-readme", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--probe-timeout", type=float, default=10, help=argparse.SUPPRESS)
    ap.add_argument("--run-timeout", type=float, default=30, help=argparse.SUPPRESS)
    args = ap.parse_args(sys.argv[1:])
    args.vs = [p.strip() for p in args.vs.split(",")]
    for peer in args.peer:
        name, _, cmd = peer.partition("=")
        if not name or not cmd.split() or name.startswith("husk") or name in PEERS:
            print(f"husk: bench: bad --peer '{peer}' (NAME=COMMAND, a name of its own)", file=sys.stderr)
            return 125
        USER_PEERS[name] = cmd.split()
        args.vs.append(name)
    args.workload = [w.strip() for w in args.workload.split(",")]
    bad = [w for w in args.workload if w not in WORKLOADS]
    if bad or args.runs < 1 or args.warmup < 0 or (args.plot and not args.plot.endswith((".svg", ".png"))):
        print(f"husk: bench: {'unknown workload ' + bad[0] if bad else 'bad --runs, --warmup or --plot (.svg or .png)'}",
              file=sys.stderr)
        return 125
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("husk: bench: --plot needs matplotlib (Debian's python3-matplotlib)", file=sys.stderr)
            return 125
    report = measure(args)
    print(text(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    if args.plot:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from husk_bench_plot import plot
        plot(report, args.plot)
    if args.update_readme:
        update_readme(args.update_readme, report, args.plot)
    return 0


README_START, README_END = "<!-- husk bench report: start -->", "<!-- husk bench report: end -->"


def update_readme(path, report, plot):
    """The README's performance section, between its markers, made from this
    report (make bench-report)."""
    with open(path) as f:
        text_ = f.read()
    a, b = text_.index(README_START) + len(README_START), text_.index(README_END)
    cmd = "husk bench --runs %d --workload %s" % (report["runs"], ",".join(w["name"] for w in report["workloads"]))
    body = [f"\n`{cmd}` (written by `make bench-report`; {time.strftime('%Y-%m-%d', time.gmtime())}):\n"]
    if plot:
        body.append(f"![start-up CDFs and husk's phases]({os.path.relpath(plot, os.path.dirname(os.path.abspath(path)))})\n")
    body.append("```\n" + text(report) + "\n```\n")
    with open(path + ".new", "w") as f:
        f.write(text_[:a] + "\n".join(body) + text_[b:])
    os.replace(path + ".new", path)


if __name__ == "__main__":
    sys.exit(main())
