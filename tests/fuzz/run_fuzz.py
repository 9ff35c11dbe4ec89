#!/usr/bin/python3
"""run_fuzz.py — runs one libFuzzer target for a fixed time and says what happened.

The one way every fuzz target is run: by the `fuzz` suite of meson test (a short smoke run in
CI) and by scripts/fuzz.sh (longer campaigns). The target fuzzes WORK (new inputs go there)
and reads SEEDS (scripts/fuzz_corpus.py's seed corpus, never written). Crashes, sanitizer
reports, timeouts and out-of-memory inputs are written as ARTIFACTS/<target>-crash-<sha1>
(and -timeout-, -oom-, -leak-).

Prints one line per run:
  fuzz_nic_rx: 1234567 execs in 60 s (20576/s), cov 1912, ft 6120, corpus 412, 0 crashes,
  0 sanitizer reports
and, for a failure, the artifact and the command that reproduces it. Exit status 0 only when
libFuzzer ran to its time limit with no crash, no sanitizer report and no new artifact.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# One report per sanitizer finding: UBSan's "runtime error:" lines (fatal with
# -fno-sanitize-recover=all, counted anyway), ASan/LSan/UBSan/libFuzzer ERROR headers.
REPORT_RES = [
    re.compile(r": runtime error: "),
    re.compile(r"^==\d+==ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer)"),
]
STAT_RE = re.compile(r"^#(\d+)\s+(INITED|NEW|REDUCE|pulse|DONE|RELOAD)\s+cov: (\d+) ft: (\d+)"
                     r"(?: corp: (\d+)/)?")
FINAL_RE = re.compile(r"^stat::(\w+):\s+(\d+)")
# Longest input per target (libFuzzer's -max_len): a jumbo frame plus the mode byte, a model
# file (the shipped GraphCC model is 35,628 bytes), TOML and CDF files, side-channel messages.
MAX_LEN = {
    "fuzz_nic_rx": 9001,
    "fuzz_switch_rx": 9002,
    "fuzz_arp": 256,
    "fuzz_run_config": 8192,
    "fuzz_cdf": 16384,
    "fuzz_model_file": 40000,
    "fuzz_perftest_msg": 256,
    "fuzz_pingpong_msg": 256,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="the fuzz target executable")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--seeds", required=True, help="seed corpus directory (read only)")
    ap.add_argument("--work", required=True, help="working corpus directory (new inputs)")
    ap.add_argument("--fresh", action="store_true", help="empty WORK first (start from seeds)")
    ap.add_argument("--artifacts", required=True, help="directory for crash/timeout/oom inputs")
    ap.add_argument("--max-len", type=int, help="default: the target's entry in MAX_LEN")
    ap.add_argument("--timeout", type=int, default=20, help="seconds one input may take")
    ap.add_argument("--log", help="also write libFuzzer's output here")
    a = ap.parse_args()

    name = os.path.basename(a.target)
    max_len = a.max_len or MAX_LEN.get(name, 4096)
    if a.fresh and os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.artifacts, exist_ok=True)
    if not os.path.isdir(a.seeds) or not os.listdir(a.seeds):
        print(f"{name}: seed corpus {a.seeds} is missing or empty (scripts/fuzz_corpus.py)")
        return 2
    prefix = os.path.join(a.artifacts, name + "-")
    before = set(os.listdir(a.artifacts))
    env = dict(os.environ)
    # Reports are fatal (the build uses -fno-sanitize-recover=all); symbolize them.
    env.setdefault("ASAN_OPTIONS", "abort_on_error=0:symbolize=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    cmd = [a.target, f"-max_total_time={a.seconds}", f"-max_len={max_len}",
           f"-timeout={a.timeout}", "-print_final_stats=1", f"-artifact_prefix={prefix}",
           a.work, a.seeds]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.decode("utf-8", "replace")
    if a.log:
        with open(a.log, "w") as f:
            f.write(" ".join(cmd) + "\n" + out)

    inited = last = None
    final = {}
    reports = 0
    for line in out.splitlines():
        m = STAT_RE.match(line)
        if m:
            last = m
            if m.group(2) == "INITED":
                inited = m
        m = FINAL_RE.match(line)
        if m:
            final[m.group(1)] = int(m.group(2))
        if any(r.search(line) for r in REPORT_RES):
            reports += 1
    new_artifacts = sorted(set(os.listdir(a.artifacts)) - before)
    crashes = len(new_artifacts)
    execs = final.get("number_of_executed_units", int(last.group(1)) if last else 0)
    rate = final.get("average_exec_per_sec", 0)
    cov = last.group(3) if last else "?"
    ft = last.group(4) if last else "?"
    corp = last.group(5) if last and last.group(5) else "?"
    init = f"INITED cov {inited.group(3)} ft {inited.group(4)}; " if inited else ""
    ok = p.returncode == 0 and reports == 0 and crashes == 0 and last is not None
    print(f"{name}: {execs} execs in {a.seconds} s ({rate}/s), {init}cov {cov}, ft {ft}, "
          f"corpus {corp}, {crashes} crashes, {reports} sanitizer reports"
          f"{'' if ok else f', libFuzzer exit {p.returncode}'}")
    if not ok:
        # The end of libFuzzer's output has the report and the input it saved.
        tail = out.splitlines()[-60:]
        print("\n".join("  | " + l for l in tail))
        for art in new_artifacts:
            print(f"  artifact: {os.path.join(a.artifacts, art)}")
            print(f"  reproduce: {a.target} {os.path.join(a.artifacts, art)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
