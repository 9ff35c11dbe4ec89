#!/usr/bin/python3
"""grid.py - run an evaluation grid: scenarios x policies x seeds of rocemu-sim cells.

Every cell (scenario, policy, seed) is one independent rocemu-sim process writing
OUT/cells/<scenario>/<policy>/seed<S>/ (flows.csv, bins.csv, metrics.csv, log.txt). A cell
counts as finished only once done.json is there: the runner writes it last, after a zero
exit, so an interrupted or failed cell is run again on the next invocation and a finished
one is skipped. Policies with a `train` command get their model built first (once per
scenario, only when the model is missing). Grid keys, Slurm and outputs: scripts/eval/README.md.

Examples:
  scripts/eval/grid.py scripts/eval/paper_grid.toml --jobs 2
  scripts/eval/grid.py scripts/eval/paper_grid.toml --list
  scripts/eval/grid.py scripts/eval/paper_grid.toml --slurm --slurm-time 00:30:00 > cells.sh

Exit status: 0 every selected cell finished, 1 some failed (listed), 2 bad grid file or
flags, 130 interrupted.
"""

import argparse
import datetime
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field

POLICIES = ("static", "graphcc", "acc", "alternate", "stall", "throw")  # rocemu-sim --policy
MODEL_POLICIES = ("graphcc", "acc")
NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")  # names become directory names and Slurm words
PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")
OUTPUTS = ("flows.csv", "metrics.csv")  # what a zero exit must have left behind


class GridError(Exception):
    """A bad grid file or flag: every problem, one per line (exit 2)."""

    def __init__(self, problems):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(eq=False)  # identity: cells and their train step refer to each other
class Train:
    """Builds one model file; cells of its (scenario, policy) wait for it."""
    scenario: str
    policy: str
    model: str
    template: list  # the grid's command with {scenario}, {run}; {model} filled at run time
    run: str
    log: str
    cells: list = field(default_factory=list)

    @property
    def name(self):
        return f"{self.scenario}/{self.policy}"

    def command(self):
        # The trainer writes a side file that is renamed once it exits 0, so a half-written
        # model never counts as present.
        values = {"scenario": self.scenario, "run": self.run, "model": self.partial}
        return [PLACEHOLDER_RE.sub(lambda m: values[m[1]], a) for a in self.template]

    @property
    def partial(self):
        return self.model + ".partial"


@dataclass(eq=False)  # identity: cells and their train step refer to each other
class Cell:
    scenario: str
    policy: str
    seed: int
    cmd: list
    dir: str
    train: Train = None

    @property
    def name(self):
        return f"{self.scenario}/{self.policy}/seed{self.seed}"


@dataclass
class Grid:
    path: str
    name: str
    out: str
    seeds: list
    sim: str
    scenarios: list  # [{name, run, until_us}]
    policies: list  # [{name, policy, model, train}]
    cells: list
    trains: list


# --- loading and checking the grid file -------------------------------------------------

def key_lines(text):
    """{(table, index, key): line} for error messages (key None: the table header)."""
    lines, table, index, counts = {}, "", None, {}
    for no, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if m := re.match(r"\[\[\s*([\w.-]+)\s*\]\]", s):
            table = m[1]
            index = counts[table] = counts.get(table, -1) + 1
            lines[(table, index, None)] = no
        elif m := re.match(r"\[\s*([\w.-]+)\s*\]", s):
            table, index = m[1], None
            lines[(table, None, None)] = no
        elif m := re.match(r"([\w-]+)\s*=", s):
            lines.setdefault((table, index, m[1]), no)
    return lines


def resolve(path, base_dir):
    """The project's rule (common/config resolve_beside): as given if absolute or present
    relative to the working directory, else beside base_dir if present there, else as given."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    beside = os.path.join(base_dir, path)
    return beside if os.path.exists(beside) else path


class Checker:
    """Typed access to one table with problems collected as `path=value: reason (line N)`."""

    def __init__(self, lines, problems):
        self.lines, self.problems = lines, problems

    def bad(self, table, index, key, value, reason):
        label = table if index is None else f"{table}[{index}]"
        if key:
            label += f".{key}"
        if value is not None:
            label += "=" + (json.dumps(value) if isinstance(value, (str, list)) else str(value))
        line = self.lines.get((table, index, key)) or self.lines.get((table, index, None))
        self.problems.append(f"{label}: {reason}" + (f" (line {line})" if line else ""))

    def table(self, tbl, table, index, spec):
        """spec: {key: (kind, required)}; kinds 'str', 'int', 'ints', 'strs'."""
        for key in tbl:
            if key not in spec:
                self.bad(table, index, key, None, f"unknown key (known: {', '.join(spec)})")
        out = {}
        for key, (kind, required) in spec.items():
            if key not in tbl:
                if required:
                    self.bad(table, index, key, None, "missing")
                out[key] = None
                continue
            v = tbl[key]
            ok = {
                "str": isinstance(v, str) and v != "",
                "int": isinstance(v, int) and not isinstance(v, bool),
                "ints": isinstance(v, list) and all(
                    isinstance(x, int) and not isinstance(x, bool) for x in v),
                "strs": isinstance(v, list) and all(isinstance(x, str) for x in v),
            }[kind]
            if not ok:
                want = {"str": "a non-empty string", "int": "an integer",
                        "ints": "a list of integers", "strs": "a list of strings"}[kind]
                self.bad(table, index, key, v, f"must be {want}")
                v = None
            out[key] = v
        return out


def load_grid(path):
    """Reads and checks a grid file; raises GridError listing every problem."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        data = tomllib.loads(raw.decode())
    except OSError as e:
        raise GridError([f"{path}: {e.strerror}"])
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise GridError([f"{path}: not valid TOML: {e}"])
    base = os.path.dirname(os.path.abspath(path))
    problems = []
    ck = Checker(key_lines(raw.decode()), problems)
    for key in data:
        if key not in ("grid", "scenario", "policy"):
            ck.bad(key, None, None, None, "unknown table (known: [grid], [[scenario]], [[policy]])")
    for key, kind in (("grid", dict), ("scenario", list), ("policy", list)):
        if key not in data:
            problems.append(f"{'[grid]' if key == 'grid' else f'[[{key}]]'}: missing")
        elif not isinstance(data[key], kind) or (kind is list and not all(
                isinstance(t, dict) for t in data[key])):
            ck.bad(key, None, None, None,
                   "must be a table [grid]" if key == "grid" else f"must be [[{key}]] tables")
    if problems:
        raise GridError([f"{path}: {p}" for p in problems])

    g = ck.table(data["grid"], "grid", None, {
        "name": ("str", True), "out": ("str", True), "seeds": ("ints", True),
        "until_us": ("int", False), "sim": ("str", False), "extra_args": ("strs", False)})
    if g["name"] and not NAME_RE.fullmatch(g["name"]):
        ck.bad("grid", None, "name", g["name"], "use letters, digits, '_', '-', '.' only")
    if g["seeds"] is not None:
        if not g["seeds"]:
            ck.bad("grid", None, "seeds", [], "must not be empty")
        elif len(set(g["seeds"])) != len(g["seeds"]):
            ck.bad("grid", None, "seeds", g["seeds"], "has duplicates")
        elif min(g["seeds"]) < 0:
            ck.bad("grid", None, "seeds", g["seeds"], "seeds must be >= 0")
    if g["until_us"] is not None and g["until_us"] <= 0:
        ck.bad("grid", None, "until_us", g["until_us"], "must be > 0")
    sim = resolve(g["sim"] or "build/apps/rocemu-sim", base)
    if not (os.path.isfile(sim) and os.access(sim, os.X_OK)):
        ck.bad("grid", None, "sim", g["sim"] or "build/apps/rocemu-sim",
               "no such executable (build it: scripts/build.sh)")

    scenarios = []
    for i, t in enumerate(data["scenario"]):
        s = ck.table(t, "scenario", i, {"name": ("str", True), "run": ("str", True),
                                        "until_us": ("int", False)})
        if s["name"] and not NAME_RE.fullmatch(s["name"]):
            ck.bad("scenario", i, "name", s["name"], "use letters, digits, '_', '-', '.' only")
        elif s["name"] in [x["name"] for x in scenarios]:
            ck.bad("scenario", i, "name", s["name"], "duplicate scenario name")
        if s["run"]:
            s["run"] = resolve(s["run"], base)
            if not os.path.isfile(s["run"]):
                ck.bad("scenario", i, "run", t["run"],
                       "no such file (relative to the working directory or the grid file)")
        if s["until_us"] is not None and s["until_us"] <= 0:
            ck.bad("scenario", i, "until_us", s["until_us"], "must be > 0")
        scenarios.append(s)
    if not data["scenario"]:
        problems.append("[[scenario]]: none given")

    policies = []
    for i, t in enumerate(data["policy"]):
        p = ck.table(t, "policy", i, {"name": ("str", True), "policy": ("str", True),
                                      "model": ("str", False), "train": ("strs", False),
                                      "args": ("strs", False)})
        if p["name"] and not NAME_RE.fullmatch(p["name"]):
            ck.bad("policy", i, "name", p["name"], "use letters, digits, '_', '-', '.' only")
        elif p["name"] in [x["name"] for x in policies]:
            ck.bad("policy", i, "name", p["name"], "duplicate policy name")
        if p["policy"] and p["policy"] not in POLICIES:
            ck.bad("policy", i, "policy", p["policy"], f"must be one of {', '.join(POLICIES)}")
        elif p["policy"] in MODEL_POLICIES and not p["model"]:
            ck.bad("policy", i, "model", None, f"missing (policy {p['policy']} needs a model)")
        elif p["policy"] and p["policy"] not in MODEL_POLICIES and p["model"]:
            ck.bad("policy", i, "model", p["model"], f"policy {p['policy']} takes no model")
        if p["model"] and set(PLACEHOLDER_RE.findall(p["model"])) - {"scenario"}:
            ck.bad("policy", i, "model", p["model"], "only {scenario} may be substituted")
        if p["train"] is not None:
            if not p["train"]:
                ck.bad("policy", i, "train", [], "must not be empty")
            elif not p["model"]:
                ck.bad("policy", i, "train", p["train"], "needs model (the file it writes)")
            unknown = {x for a in p["train"] for x in PLACEHOLDER_RE.findall(a)} - {
                "scenario", "run", "model"}
            if unknown:
                ck.bad("policy", i, "train", p["train"],
                       f"unknown placeholder {{{sorted(unknown)[0]}}} (known: "
                       "{scenario}, {run}, {model})")
        policies.append(p)
    if not data["policy"]:
        problems.append("[[policy]]: none given")
    if problems:
        raise GridError([f"{path}: {p}" for p in problems])

    out = g["out"]
    cells, trains = [], {}
    for s in scenarios:
        until = s["until_us"] or g["until_us"]
        for p in policies:
            model = p["model"].replace("{scenario}", s["name"]) if p["model"] else None
            if model:
                model = resolve(model, base)
            train = None
            if p["train"]:
                # One trainer per model file, even when several policies name the same file.
                train = trains.get(model) or Train(
                    s["name"], p["name"], model, p["train"], s["run"],
                    os.path.join(out, "train", s["name"], p["name"], "log.txt"))
                trains[model] = train
            for seed in g["seeds"]:
                d = os.path.join(out, "cells", s["name"], p["name"], f"seed{seed}")
                cmd = [sim, s["run"], "--seed", str(seed), "--policy", p["policy"]]
                if model:
                    cmd += ["--agent-model", model]
                if until:
                    cmd += ["--until-us", str(until)]
                cmd += (p["args"] or []) + (g["extra_args"] or []) + ["--out", d]
                cells.append(Cell(s["name"], p["name"], seed, cmd, d, train))
                if train:
                    train.cells.append(cells[-1])
    return Grid(path, g["name"], out, g["seeds"], sim, scenarios, policies, cells,
                list(trains.values()))


def select(grid, only_scenario, only_policy):
    """The cells the filters keep; an unknown name is a usage error."""
    def names(values):
        return {n for v in values or [] for n in v.split(",") if n}
    want_s, want_p = names(only_scenario), names(only_policy)
    problems = [f"--only-scenario {n}: no such scenario in {grid.path}"
                for n in sorted(want_s - {s["name"] for s in grid.scenarios})]
    problems += [f"--only-policy {n}: no such policy in {grid.path}"
                 for n in sorted(want_p - {p["name"] for p in grid.policies})]
    if problems:
        raise GridError(problems)
    return [c for c in grid.cells
            if (not want_s or c.scenario in want_s) and (not want_p or c.policy in want_p)]


# --- cell state --------------------------------------------------------------------------

def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cell_state(cell):
    """done | stale (done, but with another command than the grid's now) | failed | pending."""
    rec = read_json(os.path.join(cell.dir, "done.json"))
    if rec is not None:
        return "done" if rec.get("command") == cell.cmd else "stale"
    if os.path.exists(os.path.join(cell.dir, "failed.json")):
        return "failed"
    return "pending"


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)  # atomic: a reader sees the whole record or none


def stamp():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def duration(s):
    s = int(round(s))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        return lines[-1][:200] if lines else "(empty log)"
    except OSError:
        return "(no log)"


# --- running -----------------------------------------------------------------------------

class Runner:
    """Runs train steps and cells as child processes, at most `jobs` at a time."""

    def __init__(self, grid, cells, jobs, allow_train=True, train_only=False):
        self.grid, self.jobs, self.allow_train = grid, jobs, allow_train
        self.total = 0 if train_only else len(cells)
        self.skipped = self.done = 0
        self.failed = []  # (name, reason, log)
        self.walls = []
        todo = []
        for c in cells:
            st = cell_state(c)
            if st == "done":
                self.skipped += 1
            else:
                if st == "stale":
                    print(f"{c.name}: the grid's command changed since it ran: running again",
                          file=sys.stderr)
                todo.append(c)
        # A train step runs only for cells still to do, and only when its model is missing.
        self.trains = []
        for c in todo:
            t = c.train
            if t and t not in self.trains and not os.path.exists(t.model):
                self.trains.append(t)
        self.cells = [] if train_only else todo
        self.train_state = {id(t): "pending" for t in self.trains}
        self.running = {}  # Popen -> (task, monotonic start, iso start, log file)
        # Set by the SIGINT/SIGTERM handler; checked between steps, so a child is never
        # left half-registered (an exception raised inside Popen could orphan it).
        self.interrupted = None

    def start(self, task):
        t0, iso = time.monotonic(), stamp()
        if isinstance(task, Train):
            os.makedirs(os.path.dirname(task.log), exist_ok=True)
            os.makedirs(os.path.dirname(task.model) or ".", exist_ok=True)
            cmd, log_path = task.command(), task.log
            self.train_state[id(task)] = "running"
        else:
            # Leftovers of an interrupted or failed run must not mix with the new one.
            shutil.rmtree(task.dir, ignore_errors=True)
            os.makedirs(task.dir)
            cmd, log_path = task.cmd, os.path.join(task.dir, "log.txt")
        log = open(log_path, "w")
        log.write(f"$ {shlex.join(cmd)}\n")
        log.flush()
        try:
            # Own session: a terminal's Ctrl-C reaches the runner only, which then stops
            # the children itself (and a killed process group takes their children too).
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            log.write(f"cannot start {cmd[0]}: {e.strerror}\n")
            log.close()
            self.finish(task, 127, t0, iso, log_path)
            return
        self.running[proc] = (task, t0, iso, log)

    def finish(self, task, rc, t0, iso, log_path):
        wall = time.monotonic() - t0
        if isinstance(task, Train):
            ok = rc == 0 and os.path.isfile(task.partial)
            if ok:
                os.replace(task.partial, task.model)
            else:
                if os.path.exists(task.partial):
                    os.remove(task.partial)
            self.train_state[id(task)] = "done" if ok else "failed"
            what = "done" if ok else f"FAILED (exit {rc}, log {log_path})"
            print(f"train {task.name} {what} in {wall:.1f} s -> {task.model}", file=sys.stderr)
            if not ok:
                for c in task.cells:
                    if c in self.cells:
                        self.cells.remove(c)
                        self.fail(c, f"train step {task.name} failed (exit {rc})", log_path, 0)
            return
        missing = [f for f in OUTPUTS if not os.path.isfile(os.path.join(task.dir, f))]
        rec = {"cell": task.name, "command": task.cmd, "exit_code": rc,
               "wall_s": round(wall, 3), "start": iso, "end": stamp(),
               "host": socket.gethostname()}
        if rc == 0 and not missing:
            write_json(os.path.join(task.dir, "done.json"), rec)
            self.done += 1
            self.walls.append(wall)
            self.progress(f"done {task.name} in {wall:.1f} s")
        else:
            reason = f"exit {rc}" if rc else f"exit 0 but no {', '.join(missing)}"
            write_json(os.path.join(task.dir, "failed.json"), dict(rec, reason=reason))
            self.fail(task, reason, log_path, wall)

    def fail(self, cell, reason, log_path, wall):
        self.failed.append((cell.name, reason, log_path))
        self.progress(f"FAILED {cell.name} ({reason}) in {wall:.1f} s")

    def progress(self, what):
        n = self.skipped + self.done + len(self.failed)
        left = self.total - n
        if left == 0:
            eta = "ETA 0s"
        elif self.walls:
            # Cells of one grid take similar time; `jobs` of them run side by side.
            mean = sum(self.walls) / len(self.walls)
            eta = f"ETA {duration(mean * left / min(self.jobs, left))}"
        else:
            eta = "ETA ?"
        print(f"[{n}/{self.total}] {what}, {len(self.failed)} failed, {self.skipped} skipped, "
              f"{eta}", file=sys.stderr, flush=True)

    def next_task(self):
        for t in self.trains:
            if self.train_state[id(t)] == "pending":
                return t
        for c in self.cells:
            if c.train and c.train in self.trains:
                if self.train_state[id(c.train)] != "done":
                    continue  # waits for its model
            return c
        return None

    def run(self):
        if not self.allow_train:
            for t in self.trains:
                for c in t.cells:
                    if c in self.cells:
                        self.cells.remove(c)
                        self.fail(c, f"model {t.model} missing; run grid.py {self.grid.path} "
                                  "--train-only first (--cell never trains)", None, 0)
            self.trains = []
        while not self.interrupted:
            while len(self.running) < self.jobs and not self.interrupted:
                task = self.next_task()
                if task is None:
                    break
                if isinstance(task, Cell):
                    self.cells.remove(task)
                self.start(task)
            if not self.running:
                break
            time.sleep(0.05)
            for proc in [p for p in self.running if p.poll() is not None]:
                task, t0, iso, log = self.running.pop(proc)
                log.close()
                self.finish(task, proc.returncode, t0, iso, log.name)

    def stop(self):
        """Ctrl-C / SIGTERM: stop every child (its whole process group), leave done cells."""
        for proc in self.running:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        for proc in self.running:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        for task, _, _, log in self.running.values():
            log.close()
            if isinstance(task, Train) and os.path.exists(task.partial):
                os.remove(task.partial)
        n = len(self.running)
        self.running.clear()
        return n


# --- the other modes ---------------------------------------------------------------------

def list_cells(grid, cells):
    counts = {}
    width = max(len(c.name) for c in cells)
    for c in cells:
        st = cell_state(c)
        counts[st] = counts.get(st, 0) + 1
        print(f"{st:8} {c.name:{width}}  {c.dir}")
    for t in {id(c.train): c.train for c in cells if c.train}.values():
        st = "present" if os.path.exists(t.model) else "missing (trained before its cells)"
        print(f"model    {t.name:{width}}  {t.model}: {st}")
    print(f"{len(cells)} cells: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))


def dry_run(grid, cells):
    todo = [c for c in cells if cell_state(c) != "done"]
    print(f"# grid {grid.name}: {len(cells)} cells, {len(cells) - len(todo)} done (skipped), "
          f"{len(todo)} to run")
    seen = set()
    for c in todo:
        t = c.train
        if t and id(t) not in seen and not os.path.exists(t.model):
            seen.add(id(t))
            print(f"# train {t.name} (log {t.log})")
            print(f"{shlex.join(t.command())} && mv {shlex.quote(t.partial)} "
                  f"{shlex.quote(t.model)}")
    for c in todo:
        print(f"{shlex.join(c.cmd)} > {shlex.quote(os.path.join(c.dir, 'log.txt'))} 2>&1")


def slurm_script(grid, cells, args):
    """A job-array script: task K runs cell K through `grid.py --cell NAME` (so the task
    writes done.json and skips a finished cell exactly as a local run does). Run with bash
    it submits itself, after a train array for the models missing now (afterok)."""
    q = shlex.quote
    cwd = os.getcwd()
    py, me = sys.executable, os.path.abspath(__file__)
    gridf = os.path.abspath(grid.path)
    logs = os.path.join(os.path.abspath(grid.out), "slurm")
    os.makedirs(logs, exist_ok=True)  # Slurm does not create --output directories
    trains = sorted({(c.train.scenario, c.train.policy) for c in cells
                     if c.train and not os.path.exists(c.train.model)})
    opts = ["--cpus-per-task=1"]
    if args.slurm_partition:
        opts.append(f"--partition={args.slurm_partition}")
    train_opts = list(opts)
    if args.slurm_time:
        opts.append(f"--time={args.slurm_time}")
    if args.slurm_train_time or args.slurm_time:
        train_opts.append(f"--time={args.slurm_train_time or args.slurm_time}")
    for o in opts + train_opts + [logs]:
        if any(ch.isspace() for ch in o):
            raise GridError([f"{o}: #SBATCH lines cannot hold spaces"])
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name={grid.name}",
             f"#SBATCH --array=0-{len(cells) - 1}",
             f"#SBATCH --output={logs}/%x-%A_%a.out"]
    lines += [f"#SBATCH {o}" for o in opts]
    lines += [
        f"# Generated by scripts/eval/grid.py --slurm from {gridf}:",
        f"# {len(cells)} cells, one array task each (a finished cell is skipped by its task).",
        "# Submit with",
        "#   bash THIS_SCRIPT    (submits the train array first when models are missing,",
        "#                        then this array with --dependency=afterok on it)",
        "# or `sbatch THIS_SCRIPT` when no model needs training: "
        f"{len(trains)} train step(s) pending now.",
        "set -euo pipefail",
        'script=$(readlink -f "$0")',
        f"cd {q(cwd)}  # the grid's relative paths are relative to where it was generated",
        "cells=(",
        *[f"  {q(c.name)}" for c in cells],
        ")",
        "trains=(",
        *[f"  {q(s + ' ' + p)}" for s, p in trains],
        ")",
        'if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then',
        "  dep=()",
        "  if (( ${#trains[@]} > 0 )); then",
        f"    jid=$(sbatch --parsable --job-name={grid.name}-train"
        f" --array=0-$(( ${{#trains[@]}} - 1 )) --output={logs}/%x-%A_%a.out"
        f" {' '.join(train_opts)} --export=ALL,GRID_TRAIN=1 \"$script\")",
        '    dep=(--dependency=afterok:"${jid%%;*}")',
        "  fi",
        '  exec sbatch ${dep[@]+"${dep[@]}"} "$script"',
        "fi",
        'if [[ -n "${GRID_TRAIN:-}" ]]; then',
        '  read -r scenario policy <<< "${trains[$SLURM_ARRAY_TASK_ID]}"',
        f'  exec {q(py)} {q(me)} {q(gridf)} --train-only --only-scenario "$scenario"'
        ' --only-policy "$policy" --jobs 1',
        "fi",
        f'exec {q(py)} {q(me)} {q(gridf)} --cell "${{cells[$SLURM_ARRAY_TASK_ID]}}"',
    ]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Grid keys, resuming, Slurm and outputs: scripts/eval/README.md")
    ap.add_argument("grid", help="grid TOML ([grid], [[scenario]], [[policy]])")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="cells run in parallel (default: CPUs, here %(default)s)")
    ap.add_argument("--list", action="store_true", help="print the cells and their state")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument("--slurm", action="store_true",
                    help="print a Slurm job-array script for the grid (runs nothing)")
    ap.add_argument("--slurm-partition", help="#SBATCH --partition")
    ap.add_argument("--slurm-time", help="#SBATCH --time per cell, e.g. 00:30:00")
    ap.add_argument("--slurm-train-time", help="--time of a train task (default --slurm-time)")
    ap.add_argument("--only-scenario", action="append", metavar="NAME[,NAME]",
                    help="only these scenarios (repeatable)")
    ap.add_argument("--only-policy", action="append", metavar="NAME[,NAME]",
                    help="only these policies (repeatable)")
    ap.add_argument("--train-only", action="store_true",
                    help="run only the missing models' train steps")
    ap.add_argument("--cell", metavar="SCENARIO/POLICY/seedN",
                    help="run this one cell (a Slurm task; never trains)")
    args = ap.parse_args()
    if args.jobs < 1:
        ap.error("--jobs must be >= 1")
    if sum(map(bool, (args.list, args.dry_run, args.slurm, args.train_only, args.cell))) > 1:
        ap.error("--list, --dry-run, --slurm, --train-only and --cell exclude each other")

    try:
        grid = load_grid(args.grid)
        cells = select(grid, args.only_scenario, args.only_policy)
        if args.cell:
            cells = [c for c in grid.cells if c.name == args.cell]
            if not cells:
                raise GridError([f"--cell {args.cell}: no such cell in {grid.path} "
                                 "(see --list)"])
        if not cells:
            raise GridError(["the filters leave no cell"])
        if args.list:
            return list_cells(grid, cells) or 0
        if args.dry_run:
            return dry_run(grid, cells) or 0
        if args.slurm:
            sys.stdout.write(slurm_script(grid, cells, args))
            return 0
    except GridError as e:
        for p in e.problems:
            print(f"grid.py: {p}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except OSError as e:
        print(f"grid.py: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1

    if not args.cell:
        # Two runners on one grid would delete each other's running cells. Slurm tasks
        # (--cell) run side by side on distinct cells and take no lock.
        try:
            os.makedirs(grid.out, exist_ok=True)
            lock = open(os.path.join(grid.out, "grid.lock"), "w")
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"grid.py: another grid.py is running on {grid.out}", file=sys.stderr)
            return 1
        except OSError as e:
            print(f"grid.py: {grid.out}: {e.strerror}", file=sys.stderr)
            return 1
    runner = Runner(grid, cells, args.jobs, allow_train=not args.cell,
                    train_only=args.train_only)
    what = (f"{len(runner.trains)} train step(s)" if args.train_only else
            f"{len(cells)} cells, {runner.skipped} done already (skipped), "
            f"{len(runner.cells)} to run")
    print(f"grid {grid.name}: {what}, {min(args.jobs, max(1, len(runner.cells)))} job(s)",
          file=sys.stderr, flush=True)
    t0 = time.monotonic()

    def on_signal(signum, frame):
        runner.interrupted = signum
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)  # Slurm's scancel and kill stop cleanly too
    try:
        runner.run()
        if runner.interrupted:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            n = runner.stop()
            print(f"grid.py: interrupted: stopped {n} running task(s); {runner.done} cells "
                  "finished in this run are kept, run again to finish the rest",
                  file=sys.stderr)
            return 130
    except OSError as e:
        runner.stop()
        print(f"grid.py: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 1

    wall = duration(time.monotonic() - t0)
    if args.train_only:
        bad = [t.name for t in runner.trains if runner.train_state[id(t)] != "done"]
        print(f"grid {grid.name}: {len(runner.trains) - len(bad)} model(s) trained, "
              f"{len(bad)} failed{': ' + ', '.join(bad) if bad else ''} in {wall}",
              file=sys.stderr)
        return 1 if bad else 0
    if runner.failed:
        print(f"grid {grid.name}: {runner.done + runner.skipped} of {runner.total} cells "
              f"finished ({runner.skipped} skipped), {len(runner.failed)} failed in {wall}; "
              "run again to retry them:", file=sys.stderr)
        for name, reason, log in runner.failed:
            tail = f"; log {log}: {last_line(log)}" if log else ""
            print(f"  {name}: {reason}{tail}", file=sys.stderr)
        return 1
    print(f"grid {grid.name}: all {runner.total} cells finished ({runner.skipped} skipped) in "
          f"{wall}; results in {os.path.join(grid.out, 'cells')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `grid.py --list | head`
        sys.stdout = open(os.devnull, "w")
        sys.exit(1)
