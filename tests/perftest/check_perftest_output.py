#!/usr/bin/env python3
"""check_perftest_output.py MODE TOOL ARGS... — runs a rocemu perftest tool and checks its output.

MODE bw | bw-gbits: exit 0, perftest's bandwidth header (exact), one row whose #iterations is
  the -n given, BW average > 0, BW peak >= BW average, MsgRate > 0; and the --out_json file
  (added here) agrees with the row.
MODE bw-nopeak | bw-gbits-nopeak: the same, but BW peak must be 0.00 (perftest's SEND server
  and duration mode measure no peak).
MODE bw-all | bw-gbits-all [-nopeak]: -a, every size of perftest's RC sweep (2 B .. 8 MiB,
  23 rows in order), each with #iterations = -n, agreeing with its JSON entry, values >= 0
  (a row may round to 0.00), and some row with a positive average.
MODE bw-rate: as bw, but the average may show 0.00 as long as MsgRate > 0: 8-byte atomics
  against the TCG guest run at a few hundred operations per second, which perftest's two
  decimals of MiB/sec round to 0.00 (MsgRate, six decimals of Mpps, still shows them).
MODE lat: exit 0, the latency header (exact), one row with #iterations = -n and
  0 < t_min <= t_typical <= t_max, t_min <= t_avg <= t_max, 99% <= 99.9% <= t_max.
The TOOL may be scripts/testbed/perftest_2host.sh followed by the real tool.
MODE usage: exit 2, "Usage:" and the offending flag on stderr, nothing on stdout.
MODE setup-error NEEDLE: exit 3 within seconds, NEEDLE on stderr, no table and no "Waiting
  for client" banner on stdout (e.g. a server on an interface that does not exist).
"""
import json
import os
import subprocess
import sys
import tempfile

BW_MIB = (" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   "
          "MsgRate[Mpps]")
BW_GB = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
       "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")


def fail(msg, out="", err=""):
    print("FAIL:", msg)
    print("--- stdout\n" + out + "--- stderr\n" + err)
    sys.exit(1)


def main():
    mode, tool, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "setup-error":
        needle, tool, args = sys.argv[2], sys.argv[3], sys.argv[4:]
        try:
            p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            fail("still running after 20 s: it waits instead of failing")
        if p.returncode != 3:
            fail("exit %d, want 3" % p.returncode, p.stdout, p.stderr)
        if needle not in p.stderr:
            fail("stderr lacks %r" % needle, p.stdout, p.stderr)
        if "#bytes" in p.stdout or "Waiting for client" in p.stdout:
            fail("a table or the waiting banner was printed", p.stdout, p.stderr)
        print("ok: setup error exits 3 at once")
        return
    json_path = None
    if mode != "usage":
        fd, json_path = tempfile.mkstemp(suffix=".json", prefix="rocemu-perftest-")
        os.close(fd)
        args = args + ["--out_json=" + json_path]
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=110)
    out, err = p.stdout, p.stderr
    if mode == "usage":
        if p.returncode != 2:
            fail("exit %d, want 2" % p.returncode, out, err)
        if "Usage:" not in err or args[-1] not in err:
            fail("usage or the flag missing from stderr", out, err)
        if "#bytes" in out:
            fail("a table was printed for a usage error", out, err)
        print("ok: usage error exits 2")
        return
    if p.returncode != 0:
        fail("exit %d" % p.returncode, out, err)
    nopeak = mode.endswith("-nopeak")
    mode = mode[:-len("-nopeak")] if nopeak else mode
    rate_only = mode.endswith("-rate")
    mode = mode[:-len("-rate")] if rate_only else mode
    all_sizes = mode.endswith("-all")
    mode = mode[:-len("-all")] if all_sizes else mode
    header = {"bw": BW_MIB, "bw-gbits": BW_GB, "lat": LAT}[mode]
    lines = out.splitlines()
    if header not in lines:
        fail("exact header missing: %r" % header, out, err)
    iters = int(args[args.index("-n") + 1])
    sizes = [1 << i for i in range(1, 24)] if all_sizes else [int(args[args.index("-s") + 1])]
    first = lines.index(header) + 1
    rows = [lines[first + i].split() for i in range(len(sizes)) if first + i < len(lines)]
    with open(json_path) as f:
        results = json.load(f)["results"]
    os.unlink(json_path)
    if [r.get("bytes") for r in results] != sizes:
        fail("JSON results %r" % results, out, err)
    for size, row, res in zip(sizes, rows, results):
        check_row(mode, nopeak, size, iters, row, res, out, err, all_sizes, rate_only)
    if len(rows) != len(sizes):
        fail("%d rows, want %d" % (len(rows), len(sizes)), out, err)
    column = 4 if rate_only else 3  # MsgRate, else BW average
    if mode.startswith("bw") and not any(float(r[column]) > 0 for r in rows):
        fail("no row shows any bandwidth", out, err)
    row = rows[-1]
    vals = [float(x) for x in row[2:]]
    name = " ".join(os.path.basename(a) for a in [tool] + args[:1])
    if mode.startswith("bw"):
        print("ok: %s%s avg %.2f peak %.2f %s" % (name, " -a (%d sizes)" % len(sizes) if all_sizes else "",
                                                vals[1], vals[0], "Gb/s" if mode == "bw-gbits" else "MiB/s"))
        for line in lines:  # --check_data's verdict (apps/perftest/data_check.h)
            if line.startswith(" Data check:"):
                print(line.strip())
    else:
        print("ok: %s typical %.2f us, p99 %.2f us" % (name, vals[2], vals[5]))


def check_row(mode, nopeak, size, iters, row, res, out, err, all_sizes, rate_only=False):
    if len(row) < 2 or not row[0].isdigit() or int(row[0]) != size or int(row[1]) != iters:
        fail("row %r: want %d bytes, %d iterations" % (row, size, iters), out, err)
    vals = [float(x) for x in row[2:]]
    if mode.startswith("bw"):
        peak, avg, rate = vals
        # perftest prints 2 decimals of Gb/s and 6 of Mpps: with -a a row of a few small
        # messages shows 0.00, and against a slow peer (the TCG guest) even its MsgRate can
        # round to 0.000000, as real perftest prints them. So with -a each row must be
        # well-formed and the sweep as a whole must show bandwidth (checked by the caller).
        if all_sizes:
            positive = avg >= 0 and rate >= 0
        elif rate_only:
            positive = avg >= 0 and rate > 0
        else:
            positive = avg > 0 and rate > 0
        if not (positive and (peak == 0 if nopeak else peak >= avg)):
            fail("bandwidth row %r" % row, out, err)
        if "[info]" in out or "EAL:" in out:
            fail("log lines on stdout", out, err)
        key = "bw_avg_gbps" if mode == "bw-gbits" else "bw_avg_mib_s"
        if abs(res[key] - avg) > 0.01 + 1e-3 * avg:
            fail("JSON %s=%r, table %r" % (key, res[key], avg), out, err)
    else:
        tmin, tmax, typ, avg, stdev, p99, p999 = vals
        if not (0 < tmin <= typ <= tmax and tmin <= avg <= tmax and p99 <= p999 <= tmax
                and stdev >= 0):
            fail("latency row %r" % row, out, err)
        if abs(res["t_typical_us"] - typ) > 0.01:
            fail("JSON t_typical %r, table %r" % (res["t_typical_us"], typ), out, err)


if __name__ == "__main__":
    main()
