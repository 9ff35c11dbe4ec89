#!/usr/bin/python3
"""plot_agent.py - an ECN agent at work: each chosen port's thresholds (Kmin, Kmax, Pmax as
put in force by the [agent] loop, from ecn.csv) and its egress queue over time (from the
[telemetry] queue series, queues_<switch>.csv), one panel per port.

Inputs are what a run with `[agent] record = true` and `[telemetry] interval_us = N` writes
into --out (docs/config.md): ecn.csv (time_ns,switch,port,kmin_bytes,kmax_bytes,pmax: one
row per setting put in force) and queues_<switch>.csv (time_ns,node,port,queue_bytes,...).
A port with no row in ecn.csv kept its [switch.ecn] setting all run (drawn as given by
--initial, default 5,200,0.01 = KB,KB,Pmax).

Example:
  build/apps/rocemu-sim configs/workloads/clos24_fbhdp_incast.toml --policy graphcc \
      --agent-model graphcc.model --out out/g   # with [agent] record and [telemetry] set
  scripts/plot_agent.py --dir out/g --port l0:0 --port s0:1 --out agent.png
"""

import argparse
import csv
import os
import sys


def die(msg):
    print(f"plot_agent.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        die(f"{path}: {e.strerror}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="the run's --out directory")
    ap.add_argument("--port", action="append", required=True, metavar="SWITCH:PORT",
                    help="a switch port to plot (repeatable)")
    ap.add_argument("--initial", default="5,200,0.01",
                    help="Kmin KB,Kmax KB,Pmax in force before the first change")
    ap.add_argument("--out", default="agent.png", help="output image (PNG, PDF, SVG)")
    a = ap.parse_args()
    try:
        kmin0, kmax0, pmax0 = (float(x) for x in a.initial.split(","))
    except ValueError:
        die("--initial must be KMIN_KB,KMAX_KB,PMAX")

    ecn = read_csv(os.path.join(a.dir, "ecn.csv"))
    need = {"time_ns", "switch", "port", "kmin_bytes", "kmax_bytes", "pmax"}
    if ecn and not need <= set(ecn[0]):
        die("ecn.csv lacks columns " + ", ".join(sorted(need - set(ecn[0]))))
    ports = []
    for p in a.port:
        if ":" not in p:
            die(f"--port {p}: expected SWITCH:PORT")
        sw, idx = p.rsplit(":", 1)
        ports.append((sw, idx))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(ports), 1, figsize=(9, 2.8 * len(ports)), sharex=True, squeeze=False)
    for ax, (sw, idx) in zip(axes[:, 0], ports):
        series = read_csv(os.path.join(a.dir, f"queues_{sw}.csv"))
        q = [r for r in series if r.get("port") == idx]
        if not q:
            die(f"queues_{sw}.csv has no rows for port {idx} (is [telemetry] on?)")
        t_end = max(float(r["time_ns"]) for r in q) / 1e6
        rows = [r for r in ecn if r["switch"] == sw and r["port"] == idx]
        t, kmin, kmax, pmax = [0.0], [kmin0], [kmax0], [pmax0]
        for r in rows:
            t.append(float(r["time_ns"]) / 1e6)
            kmin.append(float(r["kmin_bytes"]) / 1024)
            kmax.append(float(r["kmax_bytes"]) / 1024)
            pmax.append(float(r["pmax"]))
        t.append(t_end)
        kmin.append(kmin[-1])
        kmax.append(kmax[-1])
        pmax.append(pmax[-1])
        ax.plot([float(r["time_ns"]) / 1e6 for r in q], [float(r["queue_bytes"]) / 1024 for r in q],
                color="0.55", lw=0.8, label="queue")
        ax.step(t, kmin, where="post", color="tab:blue", label="Kmin")
        ax.step(t, kmax, where="post", color="tab:red", label="Kmax")
        ax.set_ylabel("KB")
        ax.set_title(f"{sw}:{idx} ({len(rows)} changes)", fontsize=10)
        ax2 = ax.twinx()
        ax2.step(t, pmax, where="post", color="tab:green", ls="--", label="Pmax")
        ax2.set_ylim(0, 1.05)
        ax2.set_ylabel("Pmax")
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="upper right", fontsize=8, ncol=4)
    axes[-1, 0].set_xlabel("time (ms)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"plot_agent.py: wrote {a.out}")


if __name__ == "__main__":
    main()
