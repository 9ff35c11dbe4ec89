#!/usr/bin/python3
"""plot_fct_smoke.py - scripts/plot_fct.py on two tiny hand-made runs: it must draw the
figure, and its summary table must hold the hand-computed percentiles and ratios
(linear interpolation: {1,2,3,4} -> median 2.5, p95 3.85; {2,4,6,8} -> median 5), rounded in
its CSV; a single run plots absolute slowdowns (also on a log axis); size labels read as
12.3K, 1.05M."""
import csv
import os
import subprocess
import sys
import tempfile

HEADER = "id,src,dst,size_bytes,op,incast,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown\n"


def write_run(path, slowdowns):
    with open(path, "w") as f:
        f.write(HEADER)
        for i, (size, sd) in enumerate(zip((100, 2000, 30000, 400000), slowdowns)):
            f.write(f"{i},0,1,{size},write,-1,0,{int(1000 * sd)},{int(1000 * sd)},1000,{sd:.6f}\n")


def main():
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                          "plot_fct.py")
    with tempfile.TemporaryDirectory() as d:
        write_run(os.path.join(d, "a.csv"), [1, 2, 3, 4])
        write_run(os.path.join(d, "b.csv"), [2, 4, 6, 8])
        with open(os.path.join(d, "a_metrics.csv"), "w") as f:
            f.write("metric,value\npfc_pauses,3\ncnps,9\n")
        out = subprocess.run(
            [script, "--run", f"a={d}/a.csv", "--run", f"b={d}/b.csv",
             "--metrics", f"a={d}/a_metrics.csv", "--edges", "1000,10000,100000",
             "--out", f"{d}/fig.png", "--table", f"{d}/t.csv"],
            capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"plot_fct.py failed: {out.stderr}")
        if os.path.getsize(f"{d}/fig.png") < 10000:
            sys.exit("figure is missing or empty")
        rows = {r["run"]: r for r in csv.DictReader(open(f"{d}/t.csv"))}
        checks = [
            (rows["a"]["slowdown_median"], 2.5), (rows["a"]["slowdown_p95"], 3.85),
            (rows["b"]["slowdown_median"], 5.0), (rows["b"]["median_vs_a"], 2.0),
            (rows["b"]["p99_vs_a"], 2.0), (rows["a"]["pfc_pauses"], 3), (rows["a"]["cnps"], 9),
        ]
        for got, want in checks:
            if abs(float(got) - want) > 1e-9:
                sys.exit(f"table value {got} != {want}\n{out.stdout}")
        raw = open(f"{d}/t.csv").read()
        if "3.85\n" not in raw and ",3.85," not in raw:
            sys.exit(f"the table CSV is not rounded (3.85 expected as written):\n{raw}")
        # One run: absolute slowdowns by default (normalised to itself it is 1 everywhere),
        # log scale on request; normalised with one run is refused.
        one = subprocess.run([script, "--run", f"a={d}/a.csv", "--log", "--out", f"{d}/one.png"],
                             capture_output=True, text=True)
        if one.returncode != 0 or os.path.getsize(f"{d}/one.png") < 10000:
            sys.exit(f"a single run, --log: {one.returncode} {one.stderr}")
        norm1 = subprocess.run([script, "--run", f"a={d}/a.csv", "--mode", "normalised",
                                "--out", f"{d}/n.png"], capture_output=True, text=True)
        if norm1.returncode != 2 or "needs a second --run" not in norm1.stderr:
            sys.exit(f"--mode normalised with one run: {norm1.returncode} {norm1.stderr}")
        sys.path.insert(0, os.path.dirname(script))
        import plot_fct  # noqa: E402
        labels = [plot_fct.size_label(b) for b in (100, 12345, 999999, 1048576, 2147483648)]
        if labels != ["100", "12.3K", "1M", "1.05M", "2.15G"]:
            sys.exit(f"size labels {labels}")
        bad = subprocess.run([script, "--run", f"a={d}/missing.csv"],
                             capture_output=True, text=True)
        if bad.returncode != 2 or "missing.csv" not in bad.stderr:
            sys.exit(f"a missing file must exit 2 naming it, got {bad.returncode} {bad.stderr}")
    print("ok")


if __name__ == "__main__":
    main()
