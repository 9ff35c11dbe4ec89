#!/usr/bin/python3
"""plot_training.py - training curves of rocemu-train (--curve FILE), several runs side by side.

Reads the CSV rocemu-train writes with --curve (episode,steps,epsilon,mean_reward,mean_queue,
loss,wall_s: one row per episode) and draws, against training steps, the episode's mean
reward, its mean normalised queue (the reward's q) and the last loss, one line per run.

Example:
  build/apps/rocemu-train --env network --run configs/paper/train_fbhdp60_incast.toml \
      --config configs/agent/train_graphcc.toml --curve graphcc_curve.csv
  scripts/plot_training.py --curve graphcc=graphcc_curve.csv --curve acc=acc_curve.csv \
      --out training.png
"""

import argparse
import csv
import sys

COLUMNS = ("episode", "steps", "epsilon", "mean_reward", "mean_queue", "loss", "wall_s")
PANELS = (("mean_reward", "mean reward per episode"), ("mean_queue", "mean queue (q)"),
          ("loss", "loss (last gradient step)"))


def die(msg):
    print(f"plot_training.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_curve(path):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                die(f"{path}: not a rocemu-train curve (header {reader.fieldnames})")
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    rows.append({k: float(row[k]) for k in COLUMNS})
                except (TypeError, ValueError):
                    die(f"{path}:{line}: not a number in {row}")
    except OSError as e:
        die(f"{path}: {e.strerror}")
    if not rows:
        die(f"{path}: no episodes")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--curve", action="append", required=True, metavar="NAME=CSV",
                    help="a run's curve (repeatable)")
    ap.add_argument("--out", required=True, help="image file (PNG, PDF, SVG)")
    args = ap.parse_args()
    runs = []
    for v in args.curve:
        if "=" not in v:
            die(f"--curve '{v}' must be NAME=CSV")
        name, path = v.split("=", 1)
        runs.append((name, read_curve(path)))
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4.2 * len(PANELS), 3.4))
    for ax, (key, title) in zip(axes, PANELS):
        for name, rows in runs:
            ax.plot([r["steps"] for r in rows], [r[key] for r in rows], marker=".", label=name)
        ax.set_title(title)
        ax.set_xlabel("training steps")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    try:
        fig.savefig(args.out, dpi=120)
    except OSError as e:
        die(f"{args.out}: {e.strerror}")
    print(f"training curves written to {args.out}")


if __name__ == "__main__":
    main()
