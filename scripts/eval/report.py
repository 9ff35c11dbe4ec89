#!/usr/bin/python3
"""report.py - the GraphCC paper's Table 1 and Fig. 4 for every scenario of a grid.

Reads the cells grid.py finished (OUT/cells/<scenario>/<policy>/seed<S>/metrics.csv and
flows.csv; a cell without done.json is missing, never averaged) and writes to OUT/report/:
  <scenario>_table.csv      per policy: mean, sample std (n-1) and min/max over seeds of the
                            mean FCT slowdown, goodput, mean queue and PFC pauses, and the
                            change of each mean vs --baseline in % (over the seeds both have)
  results.md                one Markdown table per scenario with flows finished/unfinished,
                            notes on missing seeds, and the figure
  <scenario>_fct.png        scripts/plot_fct.py over each policy's flows pooled across seeds
                            (pooled/<scenario>/<policy>_flows.csv), normalised to
                            --normalise-to; its summary table is <scenario>_fct_summary.csv

Example:
  scripts/eval/report.py scripts/eval/paper_grid.toml --baseline static

Exit status: 0 every cell present and everything written, 1 written but some cells missing
or a figure failed (all named), 2 bad grid file or flags.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tomllib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grid as gridmod  # noqa: E402  (the grid file's loader and cell states)

PLOT_FCT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "plot_fct.py")

# Table 1 of the paper: (metrics.csv name, Markdown heading, Markdown scale, format).
METRICS = (("slowdown_mean", "mean FCT slowdown", 1.0, "{:.3f}"),
           ("goodput_bps", "goodput (Gbps)", 1e-9, "{:.2f}"),
           ("mean_queue_bytes", "mean queue (KB)", 1e-3, "{:.2f}"),
           ("pfc_pauses", "PFC pauses", 1.0, "{:.0f}"))
COUNTS = ("flows_finished", "flows_unfinished", "flows_generated")


def die(msg):
    print(f"report.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_metrics(path):
    """{metric: float} of a metrics.csv, or a reason string when it cannot be used."""
    try:
        with open(path, newline="") as f:
            rows = {r["metric"]: r["value"] for r in csv.DictReader(f)}
    except (OSError, KeyError, csv.Error) as e:
        return f"cannot read {path} ({e})"
    out = {}
    for key in [m[0] for m in METRICS] + list(COUNTS):
        if key not in rows:
            return f"{path} has no metric {key}"
        try:
            out[key] = float(rows[key])
        except ValueError:
            return f"{path}: {key}={rows[key]!r} is not a number"
    return out


def collect(grid, scenario):
    """{policy: {seed: metrics}} of the usable cells and {policy: [(seed, why)]} of the rest."""
    have = {p["name"]: {} for p in grid.policies}
    missing = {p["name"]: [] for p in grid.policies}
    for c in grid.cells:
        if c.scenario != scenario:
            continue
        st = gridmod.cell_state(c)
        if st != "done":
            why = {"stale": "stale (ran with another command than the grid's)",
                   "failed": "failed", "pending": "not run"}[st]
            missing[c.policy].append((c.seed, why))
            continue
        m = read_metrics(os.path.join(c.dir, "metrics.csv"))
        if isinstance(m, str):
            missing[c.policy].append((c.seed, m))
        else:
            have[c.policy][c.seed] = m
    return have, missing


def spread(values):
    """(n, mean, sample std or None for one value, min, max)."""
    if not values:
        return 0, None, None, None, None
    std = statistics.stdev(values) if len(values) > 1 else None
    return len(values), statistics.fmean(values), std, min(values), max(values)


def change_pct(have, policy, baseline, key):
    """Change of the mean vs the baseline in %, over the seeds both finished (paired)."""
    seeds = sorted(set(have[policy]) & set(have.get(baseline, {})))
    if not seeds:
        return None
    b = statistics.fmean(have[baseline][s][key] for s in seeds)
    p = statistics.fmean(have[policy][s][key] for s in seeds)
    return 100.0 * (p - b) / b if b else None


def fmt_csv(v):
    return "" if v is None else f"{v:.10g}"


def table_rows(grid, have, missing, baseline):
    rows = []
    for pol in [p["name"] for p in grid.policies]:
        per_seed = have[pol]
        row = {"policy": pol, "seeds_done": len(per_seed),
               "seeds_missing": " ".join(str(s) for s, _ in missing[pol])}
        for key in COUNTS[:2]:
            row[key] = int(sum(m[key] for m in per_seed.values())) if per_seed else None
        for key, *_ in METRICS:
            n, mean, std, lo, hi = spread([m[key] for m in per_seed.values()])
            row.update({f"{key}_mean": mean, f"{key}_std": std, f"{key}_min": lo,
                        f"{key}_max": hi,
                        f"{key}_vs_{baseline}_pct": change_pct(have, pol, baseline, key)})
        rows.append(row)
    return rows


def md_value(row, key, scale, form, baseline):
    mean = row[f"{key}_mean"]
    if mean is None:
        return "missing"
    s = form.format(mean * scale)
    if row[f"{key}_std"] is not None:
        s += " ± " + form.format(row[f"{key}_std"] * scale)
    if row["seeds_done"] > 1:
        s += f" ({form.format(row[f'{key}_min'] * scale)}–{form.format(row[f'{key}_max'] * scale)})"
    ch = row[f"{key}_vs_{baseline}_pct"]
    if row["policy"] != baseline and ch is not None:
        s += f", {ch:+.1f}%"
    return s


def notes(grid, have, missing, baseline):
    out = []
    for pol, gone in missing.items():
        if not gone:
            continue
        by_why = {}
        for seed, why in gone:
            by_why.setdefault(why, []).append(str(seed))
        seeds = "; ".join(f"{why}: seed {', '.join(s)}" for why, s in by_why.items())
        rest = ("no value in its row" if len(gone) == len(grid.seeds)
                else f"its row is over the other seeds, its changes vs {baseline} over "
                "the seeds both have")
        out.append(f"**{pol}: {len(gone)} of {len(grid.seeds)} seeds missing** ({seeds}); "
                   f"{rest} (`grid.py --list` shows the cells' state).")
    for pol, per_seed in have.items():
        left = {s: int(m["flows_unfinished"]) for s, m in per_seed.items() if m["flows_unfinished"]}
        if left:
            out.append(f"**{pol}: flows unfinished at the end** ("
                       + ", ".join(f"seed {s}: {n}" for s, n in sorted(left.items()))
                       + "); its FCTs miss the slowest flows: raise until_us.")
    # One seed gives the same flows to every policy; a difference means the cells differ
    # in more than the policy.
    for seed in grid.seeds:
        gen = {pol: int(have[pol][seed]["flows_generated"]) for pol in have if seed in have[pol]}
        if len(set(gen.values())) > 1:
            out.append(f"**seed {seed}: flows generated differ between policies** ({gen}).")
    if baseline not in have or not have[baseline]:
        out.append(f"No finished cell of the baseline {baseline}: no changes in %.")
    return out


def cdf_of(run_path):
    """The run's [workload] cdf_file, resolved as the simulator does, or None."""
    try:
        with open(run_path, "rb") as f:
            cdf = tomllib.load(f).get("workload", {}).get("cdf_file")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(cdf, str):
        return None
    path = gridmod.resolve(cdf, os.path.dirname(os.path.abspath(run_path)))
    return path if os.path.isfile(path) else None


def pool_flows(grid, scenario, policy, seeds, path):
    """Concatenates the seeds' flows.csv (plus a seed column); returns the number of flows."""
    n, header = 0, None
    with open(path, "w", newline="") as out:
        w = csv.writer(out)
        for seed in seeds:
            cell = next(c for c in grid.cells
                        if (c.scenario, c.policy, c.seed) == (scenario, policy, seed))
            with open(os.path.join(cell.dir, "flows.csv"), newline="") as f:
                r = csv.reader(f)
                head = next(r, None)
                if head is None:
                    continue
                if header is None:
                    header = head
                    w.writerow(head + ["seed"])
                for row in r:
                    w.writerow(row + [seed])
                    n += 1
    return n


def figure(grid, scenario, run, have, norm, baseline, report_dir):
    """Fig. 4 by scripts/plot_fct.py; returns (markdown lines, problem or None)."""
    pooled_dir = os.path.join(report_dir, "pooled", scenario)
    os.makedirs(pooled_dir, exist_ok=True)
    runs, lines = {}, []
    for pol, per_seed in have.items():
        if per_seed:
            path = os.path.join(pooled_dir, f"{pol}_flows.csv")
            try:
                if pool_flows(grid, scenario, pol, sorted(per_seed), path):
                    runs[pol] = path
            except (OSError, csv.Error) as e:
                return lines, f"{scenario}: cannot pool {pol}'s flows.csv ({e})"
    if norm not in runs:
        if baseline in runs:
            lines.append(f"The figure is normalised to {baseline}: {norm} has no flows here.")
            norm = baseline
        else:
            return lines, f"{scenario}: no figure, neither {norm} nor {baseline} has flows"
    png = os.path.join(report_dir, f"{scenario}_fct.png")
    summary = os.path.join(report_dir, f"{scenario}_fct_summary.csv")
    cmd = [PLOT_FCT, "--baseline", norm, "--out", png, "--table", summary,
           "--title", f"{scenario}: FCT slowdown / {norm}, seeds pooled"]
    cmd += [a for pol, path in runs.items() for a in ("--run", f"{pol}={path}")]
    cdf = cdf_of(run)
    if cdf:
        cmd += ["--cdf", cdf]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        return lines, f"{scenario}: cannot run {PLOT_FCT}: {e.strerror}"
    if res.returncode != 0:
        err = (res.stderr.strip().splitlines() or ["no message"])[-1]
        return lines, f"{scenario}: plot_fct.py failed (exit {res.returncode}): {err}"
    with open(summary, newline="") as f:
        rows = list(csv.DictReader(f))
    lines += ["", f"Flows of all finished seeds pooled, FCT slowdown percentiles "
              f"(plot_fct.py; ratio to {norm} in brackets):", "",
              "| policy | flows | median | p95 | p99 |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{float(r[f'slowdown_{s}']):.3f} ({float(r[f'{s}_vs_{norm}']):.3f})"
                 for s in ("median", "p95", "p99")]
        lines.append(f"| {r['run']} | {r['flows']} | " + " | ".join(cells) + " |")
    lines += ["", f"![{scenario} FCT slowdown]({os.path.basename(png)})"]
    return lines, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("grid", help="the grid TOML grid.py ran")
    ap.add_argument("--baseline", default="static",
                    help="policy the changes in %% are against (default static)")
    ap.add_argument("--normalise-to", help="policy the figure is normalised to (default "
                    "graphcc if the grid has it, else the baseline)")
    ap.add_argument("--out", help="report directory (default OUT/report of the grid)")
    ap.add_argument("--no-figures", action="store_true", help="tables only")
    ap.add_argument("--only-scenario", action="append", metavar="NAME[,NAME]")
    args = ap.parse_args()
    try:
        grid = gridmod.load_grid(args.grid)
        gridmod.select(grid, args.only_scenario, None)
    except gridmod.GridError as e:
        for p in e.problems:
            print(f"report.py: {p}", file=sys.stderr)
        return 2
    names = [p["name"] for p in grid.policies]
    if args.baseline not in names:
        die(f"--baseline {args.baseline}: no such policy in {args.grid} ({', '.join(names)})")
    norm = args.normalise_to or ("graphcc" if "graphcc" in names else args.baseline)
    if norm not in names:
        die(f"--normalise-to {norm}: no such policy in {args.grid} ({', '.join(names)})")
    only = {n for v in args.only_scenario or [] for n in v.split(",") if n}
    report_dir = args.out or os.path.join(grid.out, "report")
    try:
        os.makedirs(report_dir, exist_ok=True)
    except OSError as e:
        die(f"{report_dir}: {e.strerror}")

    md = [f"# Grid {grid.name}: Table 1 per scenario", "",
          f"Seeds {', '.join(map(str, grid.seeds))}; each value is the mean ± sample std "
          f"(min–max) over the seeds of the per-run metric (metrics.csv), then the change of "
          f"the mean vs {args.baseline} over the seeds both finished. Generated by "
          f"scripts/eval/report.py from {args.grid}.", ""]
    problems = []
    for sc in grid.scenarios:
        if only and sc["name"] not in only:
            continue
        have, missing = collect(grid, sc["name"])
        rows = table_rows(grid, have, missing, args.baseline)
        csv_path = os.path.join(report_dir, f"{sc['name']}_table.csv")
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows({k: fmt_csv(v) if isinstance(v, float) or v is None else v
                         for k, v in r.items()} for r in rows)
        md += [f"## {sc['name']}", "", f"Run file `{sc['run']}`.", "",
               "| policy | seeds | flows finished / unfinished | "
               + " | ".join(m[1] for m in METRICS) + " |",
               "|---|---|---|" + "---|" * len(METRICS)]
        for r in rows:
            md.append(f"| {r['policy']} | {r['seeds_done']}/{len(grid.seeds)} | "
                      + (f"{r['flows_finished']} / {r['flows_unfinished']} | "
                         if r["seeds_done"] else "missing | ")
                      + " | ".join(md_value(r, key, scale, form, args.baseline)
                                   for key, _, scale, form in METRICS) + " |")
        sc_notes = notes(grid, have, missing, args.baseline)
        if not sc_notes:
            sc_notes = ["Every cell finished and every flow of every cell finished."]
        md += [""] + [f"- {n}" for n in sc_notes]
        gone = sum(len(v) for v in missing.values())
        if gone:
            problems.append(f"{sc['name']}: {gone} cell(s) missing")
        if not args.no_figures:
            lines, err = figure(grid, sc["name"], sc["run"], have, norm, args.baseline,
                                report_dir)
            md += lines
            if err:
                md += ["", f"- **No figure**: {err}"]
                problems.append(err)
                # An older run's figure must not pass for this one.
                stale = os.path.join(report_dir, f"{sc['name']}_fct.png")
                if os.path.exists(stale):
                    os.remove(stale)
        md.append("")
        print(f"{sc['name']}: {csv_path}", file=sys.stderr)

    md_path = os.path.join(report_dir, "results.md")
    with open(md_path, "w") as f:
        f.write("\n".join(md))
    print(f"report: {md_path}", file=sys.stderr)
    for p in problems:
        print(f"report.py: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
