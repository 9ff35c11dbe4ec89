#!/usr/bin/python3
"""grid_test.py - scripts/eval/grid.py and report.py on a 2-cell grid, as a user runs them.

usage: grid_test.py ROCEMU_SIM REPO_ROOT

A tiny 8-host Clos (FbHdp 60% for 3 ms, 6:1 incast; about 1 s per cell) x policies static
and alternate x seed 1: both cells finish (exit 0); a second run skips both and rewrites
nothing; deleting one done.json reruns only that cell; --list, --dry-run and --slurm
(bash -n, --array=0-1); report.py writes the table with both policies. Then a grid with a
missing model, a train step that works (copies the shipped GraphCC model) and one that
fails: exit 1 naming the failed cells while the others finish; bad grid files: exit 2 with
the key and line; Ctrl-C on a running cell: exit 130, the simulator stopped, no done.json.
"""

import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

RUN = """\
[run]
name = "eval_grid_test"
seed = 1

[topology]
kind = "clos"
hosts = 8
leaves = 2
spines = 2
host_rate_gbps = 25
fabric_rate_gbps = 100
delay_ns = 1000

[switch]
ecn_profile = "{root}/configs/ecn/hpcc_alibaba.toml"

[dcqcn]
profile = "{root}/configs/dcqcn/graphcc_paper.toml"

[workload]
cdf_file = "{root}/configs/workloads/FbHdp_distribution.txt"
load = 0.6
duration_us = 3000
op = "write"
qp_per_flow = true

[workload.incast]
senders = 6
size_bytes = 65536
mode = "periodic"
period_us = 1000
receiver = -1
"""

GRID = """\
[grid]
name = "t"
out = "{out}"
seeds = {seeds}
until_us = {until}
sim = "{sim}"

[[scenario]]
name = "clos8"
run = "{run}"
"""

POLICY = """
[[policy]]
name = "{name}"
policy = "{policy}"
"""


def check(cond, what, res=None):
    if not cond:
        detail = f"\n--- exit {res.returncode}\n{res.stdout}\n{res.stderr}" if res else ""
        sys.exit(f"FAIL: {what}{detail}")
    print(f"ok: {what}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    sim, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    grid_py = os.path.join(root, "scripts", "eval", "grid.py")
    report_py = os.path.join(root, "scripts", "eval", "report.py")
    model = os.path.join(root, "configs", "models", "graphcc_clos24.model")
    d = tempfile.mkdtemp(prefix="eval_grid_test.")

    def write(name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    def grid(name, out, policies, seeds="[1]", until=50000, extra=""):
        write(name, GRID.format(out=out, seeds=seeds, until=until, sim=sim, run="run.toml")
              + "".join(POLICY.format(name=n, policy=p) for n, p in policies) + extra)

    def run(*args):
        return subprocess.run([*args], cwd=d, capture_output=True, text=True, timeout=240)

    write("run.toml", RUN.format(root=root))
    t_start = time.monotonic()

    # --- a 2-cell grid: run, rerun, rerun one -------------------------------------------
    grid("a.toml", "out_a", [("static", "static"), ("alternate", "alternate")])
    cell = {p: os.path.join(d, "out_a", "cells", "clos8", p, "seed1")
            for p in ("static", "alternate")}
    res = run(grid_py, "a.toml", "--jobs", "2")
    check(res.returncode == 0, "grid.py runs both cells, exit 0", res)
    for p, c in cell.items():
        check(all(os.path.isfile(os.path.join(c, f)) for f in
                  ("done.json", "log.txt", "flows.csv", "metrics.csv")),
              f"{p}: done.json, log.txt and results in the cell", res)
    check("[2/2]" in res.stderr and "0 failed" in res.stderr, "progress line [2/2]", res)

    def mtimes():
        return {p: (os.stat(os.path.join(c, "done.json")).st_mtime_ns,
                    os.stat(os.path.join(c, "metrics.csv")).st_mtime_ns)
                for p, c in cell.items()}
    before = mtimes()
    res = run(grid_py, "a.toml", "--jobs", "2")
    check(res.returncode == 0 and "2 skipped" in res.stderr and " done clos8" not in res.stderr,
          "second run: both cells skipped", res)
    check(mtimes() == before, "second run: done.json and results untouched")

    os.remove(os.path.join(cell["static"], "done.json"))
    res = run(grid_py, "a.toml", "--list")
    check(res.returncode == 0 and "pending  clos8/static/seed1" in res.stdout
          and "done     clos8/alternate/seed1" in res.stdout, "--list shows pending/done", res)
    res = run(grid_py, "a.toml", "--dry-run")
    check(res.returncode == 0 and res.stdout.count("--policy") == 1
          and "--policy static" in res.stdout, "--dry-run prints the one pending command", res)
    res = run(grid_py, "a.toml", "--jobs", "2")
    after = mtimes()
    check(res.returncode == 0 and "done clos8/static/seed1" in res.stderr
          and "alternate/seed1 in" not in res.stderr and "1 skipped" in res.stderr,
          "deleted done.json: only that cell runs again", res)
    check(after["alternate"] == before["alternate"] and after["static"] != before["static"],
          "the other cell is untouched, the rerun cell rewritten")

    res = run(grid_py, "a.toml", "--slurm", "--slurm-partition", "short",
              "--slurm-time", "00:10:00")
    check(res.returncode == 0 and "#SBATCH --array=0-1\n" in res.stdout
          and "--partition=short" in res.stdout and res.stdout.startswith("#!/bin/bash\n"),
          "--slurm prints a 2-task array script", res)
    write("cells.sh", res.stdout)
    syn = run("bash", "-n", "cells.sh")
    check(syn.returncode == 0, "the Slurm script passes bash -n", syn)
    # A task runs its cell through grid.py --cell: a finished one is skipped.
    res = run(grid_py, "a.toml", "--cell", "clos8/alternate/seed1")
    check(res.returncode == 0 and "1 skipped" in res.stderr, "--cell skips a finished cell", res)

    res = run(report_py, "a.toml")
    check(res.returncode == 0, "report.py over the finished grid, exit 0", res)
    with open(os.path.join(d, "out_a", "report", "clos8_table.csv"), newline="") as f:
        rows = {r["policy"]: r for r in csv.DictReader(f)}
    check(set(rows) == {"static", "alternate"} and all(
        r["seeds_done"] == "1" and float(r["slowdown_mean_mean"]) >= 1.0
        and int(r["flows_finished"]) > 0 for r in rows.values()),
        "the table CSV has both policies with their metrics")
    check(rows["static"]["slowdown_mean_vs_static_pct"] == "0", "baseline's change is 0%")
    with open(os.path.join(d, "out_a", "report", "results.md")) as f:
        md = f.read()
    check("## clos8" in md and "| alternate | 1/1 |" in md, "results.md holds the table")
    check(os.path.getsize(os.path.join(d, "out_a", "report", "clos8_fct.png")) > 10000,
          "the Fig. 4 figure is written")

    # --- failures: a missing model, a train step that works and one that fails ----------
    grid("b.toml", "out_b", [("static", "static")], extra=f"""
[[policy]]
name = "nomodel"
policy = "graphcc"
model = "missing.model"

[[policy]]
name = "trained"
policy = "graphcc"
model = "models/{{scenario}}.model"
train = ["cp", "{model}", "{{model}}"]

[[policy]]
name = "badtrain"
policy = "graphcc"
model = "models/never.model"
train = ["sh", "-c", "echo cannot train {{scenario}}; exit 3"]

[[policy]]
name = "profiled"
policy = "static"
args = ["--agent-profile", "{os.path.join(root, 'configs', 'ecn', 'graphcc_learned.toml')}"]
""")
    res = run(grid_py, "b.toml", "--jobs", "2")
    check(res.returncode == 1, "a failing cell gives exit 1", res)
    check("clos8/nomodel/seed1: exit 2" in res.stderr
          and "clos8/badtrain/seed1: train step clos8/badtrain failed" in res.stderr,
          "the failed cells are named with the reason", res)
    check(all(os.path.isfile(os.path.join(d, "out_b", "cells", "clos8", p, "seed1",
                                          "done.json")) for p in ("static", "trained")),
          "the other cells finish (static; trained after its train step)", res)
    with open(os.path.join(d, "out_b", "cells", "clos8", "profiled", "seed1", "done.json")) as f:
        check("--agent-profile" in json.load(f)["command"], "a policy's args reach its cells")
    check(os.path.isfile(os.path.join(d, "models", "clos8.model"))
          and not os.path.exists(os.path.join(d, "models", "clos8.model.partial"))
          and not os.path.exists(os.path.join(d, "models", "never.model")),
          "the train step wrote its model; the failed one left nothing")
    res = run(grid_py, "b.toml", "--jobs", "2", "--only-policy", "static,trained")
    check(res.returncode == 0 and "2 skipped" in res.stderr, "--only-policy filter", res)

    # --- bad grid files: exit 2 with the key and its line -------------------------------
    bad = {
        "unknown key": ('[[policy]]\nname = "x"\npolicy = "static"\nmodle = "m"\n',
                        "policy[0].modle: unknown key", "(line 14)"),
        "empty seeds": ('[[policy]]\nname = "x"\npolicy = "static"\n',
                        "grid.seeds=[]: must not be empty", "(line 4)"),
        "duplicate": ('[[policy]]\nname = "x"\npolicy = "static"\n'
                      '[[policy]]\nname = "x"\npolicy = "acc"\nmodel = "m"\n',
                      'policy[1].name="x": duplicate policy name', "(line 15)"),
        "bad type": ('[[policy]]\nname = "x"\npolicy = 3\n',
                     "policy[0].policy=3: must be a non-empty string", "(line 13)"),
    }
    for what, (policies, msg, line) in bad.items():
        write("bad.toml", GRID.format(out="out_bad", seeds="[]" if what == "empty seeds"
                                      else "[1]", until=1000, sim=sim, run="run.toml")
              + policies)
        res = run(grid_py, "bad.toml")
        check(res.returncode == 2 and msg in res.stderr and line in res.stderr
              and "Traceback" not in res.stderr, f"bad grid ({what}): exit 2, '{msg}'", res)
    write("bad.toml", GRID.format(out="o", seeds="[1]", until=1000, sim=sim, run="nope.toml")
          + POLICY.format(name="s", policy="static"))
    res = run(grid_py, "bad.toml")
    check(res.returncode == 2 and 'scenario[0].run="nope.toml": no such file' in res.stderr,
          "bad grid (missing run file): exit 2", res)
    res = run(grid_py, "missing_grid.toml")
    check(res.returncode == 2 and "missing_grid.toml" in res.stderr, "missing grid: exit 2", res)
    check(not os.path.exists(os.path.join(d, "out_bad")), "a bad grid runs nothing")

    # --- Ctrl-C: the running simulator is stopped, nothing is counted done ---------------
    # The cell must still be running when the signal comes 0.3 s after its log appears: 2.5 s
    # of traffic is ~30-50 s of work here (a 25 ms cell, ~0.5 s on a quiet machine, finished
    # first whenever this process was descheduled for a few tenths of a second).
    grid("c.toml", "out_c", [("static", "static")], until=3000000)
    write("run.toml", RUN.format(root=root).replace("duration_us = 3000", "duration_us = 2500000"))
    c_dir = os.path.join(d, "out_c", "cells", "clos8", "static", "seed1")
    proc = subprocess.Popen([grid_py, "c.toml", "--jobs", "1"], cwd=d,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(os.path.join(c_dir, "log.txt")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    check(proc.returncode == 130 and "interrupted" in err, "Ctrl-C: exit 130", res)
    check(not os.path.exists(os.path.join(c_dir, "done.json")), "Ctrl-C: no done.json")
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"out_c/cells" in f.read():
                    alive.append(pid)
        except OSError:
            pass
    check(not alive, f"Ctrl-C: no simulator left running ({alive})")

    subprocess.run(["rm", "-rf", d])
    print(f"all checks passed in {time.monotonic() - t_start:.1f} s")


if __name__ == "__main__":
    main()
