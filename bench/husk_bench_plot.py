# SPDX-License-Identifier: GPL-2.0-only
"""husk bench --plot: a CDF of start-up per sandbox (one panel per
workload) and husk's phases as stacked bars, with Debian's matplotlib.
Each curve is an SVG group with the id cdf-WORKLOAD-SANDBOX (the tests
count them)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PHASES = ["prepare", "create", "load", "guest_start", "program", "destroy", "write_back", "process"]


def plot(report, path):
    workloads = report["workloads"]
    fig, axes = plt.subplots(1, len(workloads) + 1, figsize=(7 * len(workloads) + 6, 5.5),
                             gridspec_kw={"width_ratios": [3] * len(workloads) + [2]})
    m = report["machine"]
    fig.suptitle(f"husk bench: {m['husk']}, Linux {m['uname_r']}, {m['cpus']} CPUs, KVM {m['kvm']}, "
                 f"{report['runs']} runs each, in turns", fontsize=12)
    for ax, w in zip(axes, workloads):
        for e in w["sandboxes"]:
            v = sorted(e["samples_ms"])
            if not v:
                continue
            y = [(i + 1) / len(v) for i in range(len(v))]
            label = e["name"] + (f" ({e['failures']} failed)" if e["failures"] else "")
            line, = ax.step(v, y, where="post", label=label, linewidth=1.8)
            line.set_gid(f"cdf-{w['name']}-{e['name']}")
        ax.set_xscale("log")
        ax.set_xlabel("start to exit, ms (log scale)", fontsize=11)
        ax.set_ylabel("fraction of runs", fontsize=11)
        ax.set_title(f"workload {w['name']}", fontsize=12)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=10, loc="lower right")
    ax = axes[-1]
    bars = [(f"{w['name']}\n{name}", ph) for w in workloads for name, ph in w["phases_p50_ms"].items()]
    bottom = [0.0] * len(bars)
    for phase in PHASES:
        vals = [ph.get(phase, 0.0) for _, ph in bars]
        ax.bar(range(len(bars)), vals, bottom=bottom, label=phase)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([b[0] for b in bars], fontsize=9)
    ax.set_ylabel("ms, p50 of each phase", fontsize=11)
    ax.set_title("husk's phases", fontsize=12)
    ax.legend(fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
