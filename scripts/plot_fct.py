#!/usr/bin/python3
"""plot_fct.py - FCT slowdown by flow size for several runs side by side, and a summary table.

Reads the per-flow CSVs written by rocemu's FCT module (fabric/workload/fct.h,
write_flows_csv: id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,
slowdown) and, optionally, the metrics CSVs (write_metrics_csv: metric,value).

The figure follows the GraphCC paper's figure 4 (and HPCC's FCT plots): three panels
(median, p95, p99 FCT slowdown per flow-size bin), each run's value divided by the
baseline run's value in the same bin, and beneath them the flow-size distribution (share of
flows and of bytes per bin). Bins are (edge[i-1], edge[i]] bytes, by default the deciles of
the size distribution (the --cdf file's, else the baseline run's flows), so each bin holds
about a tenth of the flows; the x axis is the bin's upper edge. Percentiles use linear
interpolation (numpy's default), the same as FctStats::summarize().

--mode absolute plots the slowdowns themselves instead of ratios (the default with a single
run, which normalised to itself would draw every point at 1); --log puts the slowdown axis on
a log scale. Size labels are the bins' upper edges in bytes with K = 10^3, M = 10^6, rounded
to 3 significant digits (the --table CSV has the overall figures rounded to 6).

Example:
  scripts/plot_fct.py --run dcqcn=out/dcqcn_flows.csv --run graphcc=out/graphcc_flows.csv \
      --baseline dcqcn --cdf configs/workloads/WebSearch_distribution.txt \
      --metrics dcqcn=out/dcqcn_metrics.csv --out fct.png --table fct_summary.csv
  scripts/plot_fct.py --run mine=out/flows.csv --log --out fct.png
"""

import argparse
import csv
import math
import sys

import numpy as np

STATS = (("median", 50), ("p95", 95), ("p99", 99))


def die(msg):
    print(f"plot_fct.py: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_named(values, what):
    out = {}
    for v in values or []:
        if "=" not in v:
            die(f"{what} '{v}' must be NAME=PATH")
        name, path = v.split("=", 1)
        if name in out:
            die(f"{what} name '{name}' given twice")
        out[name] = path
    return out


def read_flows(path):
    sizes, slowdowns = [], []
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = {"size_bytes", "slowdown"} - set(reader.fieldnames or [])
            if missing:
                die(f"{path}: missing columns {sorted(missing)}")
            for line, row in enumerate(reader, start=2):
                try:
                    sizes.append(int(row["size_bytes"]))
                    slowdowns.append(float(row["slowdown"]))
                except ValueError:
                    die(f"{path}:{line}: bad size_bytes or slowdown")
    except OSError as e:
        die(f"{path}: {e.strerror}")
    return np.array(sizes, dtype=np.int64), np.array(slowdowns, dtype=float)


def read_metrics(path):
    try:
        with open(path, newline="") as f:
            return {row["metric"]: row["value"] for row in csv.DictReader(f)}
    except (OSError, KeyError) as e:
        die(f"{path}: cannot read metrics ({e})")


def read_cdf(path):
    """Knots (size bytes, CDF fraction) of a 'bytes percent' file, as FlowSizeCdf parses it."""
    knots = []
    try:
        with open(path) as f:
            for line_no, line in enumerate(f, start=1):
                toks = line.split("#", 1)[0].split()
                if not toks:
                    continue
                if len(toks) != 2:
                    die(f"{path}:{line_no}: expected '<size bytes> <CDF percent>'")
                try:
                    knots.append((float(toks[0]), float(toks[1]) / 100.0))
                except ValueError:
                    die(f"{path}:{line_no}: not a number")
    except OSError as e:
        die(f"{path}: {e.strerror}")
    if not knots or abs(knots[-1][1] - 1.0) > 1e-11:
        die(f"{path}: CDF must end at 100")
    return knots


def cdf_quantile(knots, p):
    """Smallest x with F(x) >= p (FlowSizeCdf::quantile)."""
    for i, (x, c) in enumerate(knots):
        if c >= p:
            if i == 0:
                return x
            x0, c0 = knots[i - 1]
            return x0 + (x - x0) * (p - c0) / (c - c0)
    return knots[-1][0]


def make_edges(args, baseline_sizes):
    if args.edges:
        edges = sorted({int(e) for e in args.edges.split(",")})
    else:
        ps = [i / 10 for i in range(1, 11)]
        if args.cdf:
            knots = read_cdf(args.cdf)
            edges = sorted({int(math.floor(cdf_quantile(knots, p) + 0.5)) for p in ps})
        else:
            edges = sorted({int(np.percentile(baseline_sizes, 100 * p)) for p in ps})
    return edges


def bin_stats(sizes, slowdowns, edges):
    """Per bin (edge[i-1], edge[i]] plus an open last bin: {stat: value}, flows, bytes."""
    idx = np.searchsorted(np.array(edges), sizes, side="left")
    rows = []
    for b in range(len(edges) + 1):
        sel = slowdowns[idx == b]
        row = {"flows": int(sel.size), "bytes": int(sizes[idx == b].sum())}
        for name, p in STATS:
            row[name] = float(np.percentile(sel, p)) if sel.size else math.nan
        rows.append(row)
    if rows[-1]["flows"] == 0:
        rows.pop()  # the open bin, unused
    return rows


def size_label(b):
    """Bytes with K/M/G (powers of 10), at most 3 significant digits: 12345 -> 12.3K."""
    r = float(f"{b:.3g}")  # rounded first, so 999999 is 1M, not 1000K
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if r >= scale:
            return f"{r / scale:g}{unit}"
    return f"{r:g}"


def plot(runs, baseline, edges, out_path, title, absolute=False, log=False):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = runs[baseline]["bins"]
    nbins = max(len(r["bins"]) for r in runs.values())
    labels = [size_label(e) for e in edges] + ["inf"]
    labels = labels[:nbins]
    x = np.arange(nbins)
    fig, axes = plt.subplots(2, 3, figsize=(15, 6.5), sharex=True,
                             gridspec_kw={"height_ratios": [3, 1]})
    for col, (stat, _) in enumerate(STATS):
        ax = axes[0][col]
        for name, run in runs.items():
            vals = []
            for b in range(nbins):
                v = run["bins"][b][stat] if b < len(run["bins"]) else math.nan
                if absolute:
                    vals.append(v)
                    continue
                d = base[b][stat] if b < len(base) else math.nan
                vals.append(v / d if d and not math.isnan(d) else math.nan)
            ax.plot(x, vals, marker="o", label=name)
        if absolute:
            ax.set_title(f"{stat} FCT slowdown")
        else:
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
            ax.set_title(f"{stat} FCT slowdown / {baseline}")
        if log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3, which="both" if log else "major")
        if col == 0:
            ax.set_ylabel("slowdown (FCT / ideal FCT)" if absolute else f"normalised to {baseline}")
            ax.legend()
        dist = axes[1][col]
        flows = np.array([b["flows"] for b in base] + [0] * (nbins - len(base)), dtype=float)
        nbytes = np.array([b["bytes"] for b in base] + [0] * (nbins - len(base)), dtype=float)
        dist.bar(x, 100 * flows / max(flows.sum(), 1), color="tab:grey", label="% of flows")
        dist.plot(x, 100 * nbytes / max(nbytes.sum(), 1), color="tab:red", marker=".",
                  label="% of bytes")
        dist.set_xticks(x)
        dist.set_xticklabels(labels, rotation=45)
        dist.set_xlabel("flow size (bin upper edge, bytes)")
        if col == 0:
            dist.set_ylabel("% per bin")
            dist.legend(fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)


def summary_rows(runs, baseline):
    rows = []
    for name, run in runs.items():
        row = {"run": name, "flows": int(run["slowdowns"].size)}
        for stat, p in STATS:
            row[f"slowdown_{stat}"] = float(np.percentile(run["slowdowns"], p))
        m = run.get("metrics", {})
        for key in ("goodput_bps", "mean_queue_bytes", "p99_queue_bytes", "pfc_pauses", "cnps"):
            row[key] = m.get(key, "")
        rows.append(row)
    base = next(r for r in rows if r["run"] == baseline)
    for row in rows:
        for stat, _ in STATS:
            d = base[f"slowdown_{stat}"]
            row[f"{stat}_vs_{baseline}"] = row[f"slowdown_{stat}"] / d if d else math.nan
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, metavar="NAME=FLOWS_CSV",
                    help="a run's per-flow CSV (repeat for several runs)")
    ap.add_argument("--metrics", action="append", metavar="NAME=METRICS_CSV",
                    help="a run's metrics CSV (queue, PFC, CNP columns of the table)")
    ap.add_argument("--baseline", help="run the others are normalised to (default: first)")
    ap.add_argument("--cdf", help="flow-size CDF file whose deciles are the bin edges")
    ap.add_argument("--edges", help="comma-separated bin upper edges in bytes (overrides --cdf)")
    ap.add_argument("--out", default="fct_slowdown.png", help="figure file (png, pdf, svg)")
    ap.add_argument("--table", help="also write the summary table as CSV here")
    ap.add_argument("--title", default="", help="figure title")
    ap.add_argument("--mode", choices=("normalised", "absolute"),
                    help="ratios to the baseline (default with several runs) or the slowdowns "
                         "themselves (default with one run)")
    ap.add_argument("--log", action="store_true", help="log-scale slowdown axis")
    args = ap.parse_args()

    paths = parse_named(args.run, "--run")
    metrics = parse_named(args.metrics, "--metrics")
    for name in metrics:
        if name not in paths:
            die(f"--metrics {name}: no --run of that name")
    baseline = args.baseline or next(iter(paths))
    if baseline not in paths:
        die(f"--baseline {baseline}: no --run of that name")

    runs = {}
    for name, path in paths.items():
        sizes, slowdowns = read_flows(path)
        if sizes.size == 0:
            die(f"{path}: no flows")
        runs[name] = {"sizes": sizes, "slowdowns": slowdowns}
        if name in metrics:
            runs[name]["metrics"] = read_metrics(metrics[name])
    # The baseline first, so the other runs' table rows can refer to it.
    order = [baseline] + [n for n in runs if n != baseline]
    runs = {n: runs[n] for n in order}

    edges = make_edges(args, runs[baseline]["sizes"])
    for run in runs.values():
        run["bins"] = bin_stats(run["sizes"], run["slowdowns"], edges)
    mode = args.mode or ("absolute" if len(runs) == 1 else "normalised")
    if mode == "normalised" and len(runs) == 1:
        die("--mode normalised needs a second --run (one run divided by itself is 1 everywhere)")
    plot(runs, baseline, edges, args.out, args.title, absolute=mode == "absolute", log=args.log)

    rows = summary_rows(runs, baseline)
    cols = list(rows[0].keys())
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(fmt(row[c]) for c in cols) + " |")
    if args.table:
        # Rounded like the figures it summarises: 6 significant digits, not float noise.
        csv_fmt = lambda v: f"{v:.6g}" if isinstance(v, float) else v  # noqa: E731
        with open(args.table, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows({c: csv_fmt(row[c]) for c in cols} for row in rows)
    print(f"figure: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
