#!/usr/bin/python3
"""Plot DCQCN per-flow rate (and target, alpha) and the bottleneck queue over time.

Input: the rate CSV written by rocemu::dcqcn::RateCsvWriter
(columns time_ns,qp,rate_gbps,target_gbps,alpha,cnps) and, optionally, a queue CSV
(columns time_ns,queue_bytes; with a port column, as a run's queues_<switch>.csv, pick
the port with --port). Any run writes both with [telemetry] dcqcn_interval_us and
interval_us (docs/config.md):

    build/apps/rocemu-sim run.toml --out out
    /usr/bin/python3 scripts/plot_dcqcn.py out/dcqcn_h0.csv --queue out/queues_s0.csv \
        --port 1 -o out/dcqcn_h0.png

and the dcqcn sim test writes them when asked:

    DCQCN_TRACE_DIR=/tmp/dcqcn build/tests/dcqcn/dcqcn_sim_tests \
        --gtest_filter='*Paper*N4'
    /usr/bin/python3 scripts/plot_dcqcn.py /tmp/dcqcn/paper_n4_rates.csv \
        --queue /tmp/dcqcn/paper_n4_queue.csv -o /tmp/dcqcn/paper_n4.png

Run with Debian's /usr/bin/python3 (it sees python3-matplotlib).
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RATE_COLUMNS = ["time_ns", "qp", "rate_gbps", "target_gbps", "alpha", "cnps"]
QUEUE_COLUMNS = ["time_ns", "queue_bytes"]


def read_csv(path, columns):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            sys.exit(f"{path}: missing columns {missing}; expected {columns}")
        return list(reader)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rates", help="rate CSV (time_ns,qp,rate_gbps,target_gbps,alpha,cnps)")
    ap.add_argument("--queue", help="queue CSV (time_ns,queue_bytes[,port,...])")
    ap.add_argument("--port", type=int, help="the port of a queue CSV with a port column")
    ap.add_argument("-o", "--output", default="dcqcn.png", help="image file to write")
    ap.add_argument("--from-ms", type=float, default=0.0, help="start of the time axis")
    ap.add_argument("--to-ms", type=float, default=None, help="end of the time axis")
    ap.add_argument("--kmin-kb", type=float, help="draw Kmin on the queue plot")
    ap.add_argument("--kmax-kb", type=float, help="draw Kmax on the queue plot")
    args = ap.parse_args()

    def in_range(t_ms):
        return t_ms >= args.from_ms and (args.to_ms is None or t_ms <= args.to_ms)

    series = defaultdict(lambda: defaultdict(list))
    for row in read_csv(args.rates, RATE_COLUMNS):
        t_ms = int(row["time_ns"]) / 1e6
        if not in_range(t_ms):
            continue
        s = series[int(row["qp"])]
        s["t"].append(t_ms)
        for key in ("rate_gbps", "target_gbps", "alpha"):
            s[key].append(float(row[key]))

    panels = 3 if args.queue else 2
    fig, axes = plt.subplots(panels, 1, sharex=True, figsize=(10, 2.6 * panels))
    for qp in sorted(series):
        s = series[qp]
        line, = axes[0].plot(s["t"], s["rate_gbps"], lw=0.8, label=f"QP {qp}")
        axes[0].plot(s["t"], s["target_gbps"], lw=0.5, ls=":", color=line.get_color())
        axes[1].plot(s["t"], s["alpha"], lw=0.8, color=line.get_color())
    axes[0].set_ylabel("rate R_C (Gbps)\n(dotted: R_T)")
    axes[1].set_ylabel("alpha")
    if len(series) <= 16:
        axes[0].legend(loc="upper right", fontsize="small", ncol=4)

    if args.queue:
        t, q = [], []
        rows = read_csv(args.queue, QUEUE_COLUMNS)
        if rows and "port" in rows[0]:
            ports = sorted({int(r["port"]) for r in rows})
            if args.port is None and len(ports) > 1:
                sys.exit(f"{args.queue}: rows of ports {ports}; pick one with --port")
            if args.port is not None:
                if args.port not in ports:
                    sys.exit(f"{args.queue}: no rows for port {args.port} (ports {ports})")
                rows = [r for r in rows if int(r["port"]) == args.port]
        elif args.port is not None:
            sys.exit(f"{args.queue}: no port column for --port")
        for row in rows:
            t_ms = int(row["time_ns"]) / 1e6
            if in_range(t_ms):
                t.append(t_ms)
                q.append(int(row["queue_bytes"]) / 1024)
        axes[2].plot(t, q, lw=0.8, color="black")
        for kb, name in ((args.kmin_kb, "Kmin"), (args.kmax_kb, "Kmax")):
            if kb is not None:
                axes[2].axhline(kb, ls="--", lw=0.6, color="red")
                axes[2].annotate(name, (axes[2].get_xlim()[0], kb), fontsize="small")
        axes[2].set_ylabel("queue (KiB)")
    axes[-1].set_xlabel("time (ms)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
