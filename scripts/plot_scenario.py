#!/usr/bin/python3
"""plot_scenario.py — per-flow rate and switch queue over time for a DCQCN scenario run.

Reads the traces tests/scenarios writes when SCENARIO_TRACE_DIR is set:
  <prefix>_flows.csv  time_ns,flow,rate_gbps,throughput_gbps   (rate = the DCQCN RP's R_C)
  <prefix>_queue.csv  switchsw QueueSeriesWriter rows (time_ns,node,port,queue_bytes,...)
One column of plots per prefix (e.g. the same scenario with DCQCN on and off): per-flow
throughput on the sender's wire (solid) and RP rate (dotted) above, queue length below.

  /usr/bin/python3 scripts/plot_scenario.py /tmp/t/incast_dcqcn /tmp/t/incast_off \
      --labels "DCQCN" "no DCQCN" --kmin-kb 5 --kmax-kb 200 -o docs/figures/incast.png
Exit 2 on a missing or malformed file.
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"plot_scenario: {path}: {e.strerror}")


def load(prefix, port):
    flows = defaultdict(lambda: ([], [], []))
    for r in read_rows(prefix + "_flows.csv"):
        t, rate, thr = flows[int(r["flow"])]
        t.append(int(r["time_ns"]) / 1e6)
        rate.append(float(r["rate_gbps"]))
        thr.append(float(r["throughput_gbps"]))
    queue_t, queue_kb = [], []
    for r in read_rows(prefix + "_queue.csv"):
        if port is not None and int(r["port"]) != port:
            continue
        queue_t.append(int(r["time_ns"]) / 1e6)
        queue_kb.append(int(r["queue_bytes"]) / 1024)
    if not flows:
        sys.exit(f"plot_scenario: {prefix}_flows.csv has no rows")
    return flows, queue_t, queue_kb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefixes", nargs="+", help="trace prefixes (<prefix>_flows.csv ...)")
    ap.add_argument("--labels", nargs="*", help="column titles, one per prefix")
    ap.add_argument("--port", type=int, help="switch port of the queue rows (default: all)")
    ap.add_argument("--kmin-kb", type=float)
    ap.add_argument("--kmax-kb", type=float)
    ap.add_argument("--to-ms", type=float, help="right end of the time axis")
    ap.add_argument("--max-flows", type=int, default=16, help="flows drawn per run")
    ap.add_argument("--title", default="")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    labels = a.labels or a.prefixes
    if len(labels) != len(a.prefixes):
        ap.error("--labels needs one label per prefix")
        return 2

    n = len(a.prefixes)
    fig, axes = plt.subplots(2, n, figsize=(6.5 * n, 6.5), sharex=True, squeeze=False)
    for col, (prefix, label) in enumerate(zip(a.prefixes, labels)):
        flows, qt, qkb = load(prefix, a.port)
        ax = axes[0][col]
        for i, (flow, (t, rate, thr)) in enumerate(sorted(flows.items())):
            if i >= a.max_flows:
                break
            line, = ax.plot(t, thr, lw=0.8, label=f"flow {flow}")
            ax.plot(t, rate, ls=":", lw=0.8, color=line.get_color())
        ax.set_ylabel("Gbit/s (solid: wire, dotted: RP rate)")
        ax.set_title(label)
        ax.set_ylim(bottom=0)
        if len(flows) <= 8:
            ax.legend(fontsize=7, loc="upper right")
        qa = axes[1][col]
        qa.plot(qt, qkb, lw=0.8, color="black")
        for k, name in ((a.kmin_kb, "Kmin"), (a.kmax_kb, "Kmax")):
            if k is not None:
                qa.axhline(k, ls="--", lw=0.7, color="red")
                qa.text(qt[-1] if qt else 0, k, name, fontsize=7, color="red", va="bottom", ha="right")
        qa.set_ylabel("queue (KB)")
        qa.set_xlabel("time (ms)")
        if a.to_ms:
            qa.set_xlim(0, a.to_ms)
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
