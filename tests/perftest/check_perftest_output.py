#!/usr/bin/env python3
"""check_perftest_output.py MODE TOOL ARGS... — runs a rocemu perftest tool and checks its output.

MODE bw | bw-gbits: exit 0, perftest's bandwidth header (exact), one row whose #iterations is
  the -n given (times -q, as perftest counts), BW average > 0, BW peak >= BW average, MsgRate > 0; and the --out_json file
  (added here) agrees with the row.
MODE bw-nopeak | bw-gbits-nopeak: the same, but BW peak must be 0.00 (perftest's SEND server
  and duration mode measure no peak).
MODE bw-all | bw-gbits-all [-nopeak]: -a, every size of perftest's RC sweep (2 B .. 8 MiB,
  23 rows in order), each with #iterations = -n, agreeing with its JSON entry, values >= 0
  (a row may round to 0.00), and some row with a positive average.
MODE bw-rate: as bw, but the average may show 0.00 as long as MsgRate > 0: 8-byte atomics
  against the TCG guest run at a few hundred operations per second, which perftest's two
  decimals of MB/sec round to 0.00 (MsgRate, six decimals of Mpps, still shows them).
MODE ...-report (e.g. bw-gbits-report): the row is the client's report, as a perftest WRITE,
  READ or ATOMIC server prints it. Real perftest first fits its cycle counter against
  gettimeofday; when the fit is poor (r^2 < 0.9: a loaded TCG guest) it prints "Correlation
  coefficient r^2: ... < 0.9" and reports every rate as 0. A row whose rates are all zero
  (bytes and iterations as asked) then exits 4, so that the caller can serve the client's
  retry (tests/interop/host_perftest_report.sh); any other row is checked as in MODE.
Any bandwidth or latency MODE: a tool that failed saying its peer's requester "stopped of its
  own accord" (nothing arrived for 5 s or more and everything that had arrived was answered: Linux 6.1
  rxe's requester can miss its wake-up so) exits 5, so that the caller can serve the client's
  rerun (tests/interop/host_perftest_report.sh); any other failure exits 1.
The tool gets 50 s past its --server_wait (default 60) before it counts as hung.
MODE lat: exit 0, the latency header (exact), one row with #iterations = -n and
  0 < t_min <= t_typical <= t_max, t_min <= t_avg <= t_max, 99% <= 99.9% <= t_max.
The TOOL may be scripts/testbed/perftest_2host.sh followed by the real tool.
MODE usage: exit 2, "Usage:" and the offending flag on stderr, nothing on stdout.
MODE setup-error NEEDLE: exit 3 within seconds, NEEDLE on stderr, no table and no "Waiting
  for client" banner on stdout (e.g. a server on an interface that does not exist).
MODE compare SAMPLES NAME: TOOL is scripts/testbed/perftest_2host.sh and the rocemu tool; both
  sides' stdout must be what real perftest 4.5 printed in the same mode, SAMPLES/NAME.server.stdout
  and SAMPLES/NAME.client.stdout (tests/perftest/data/perftest-4.5), line by line: every line
  equal, except the fields that legitimately differ between runs and machines, which must
  still print exactly as perftest's printf formats print them (widths, padding, tabs): the
  device name, LID/QPN/PSN/RKey/VAddr and the GID of the address block, and the measured
  numbers of table rows (#bytes always equal, and #iterations unless the run has -D).
"""
import re
import json
import os
import subprocess
import sys
import tempfile

BW_MIB = (" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   "
          "MsgRate[Mpps]")
BW_GB = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
       "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")


# bench_roles.h's kPeerStoppedVerdict: a rocemu server's test failed because its peer sent
# nothing more while everything it had sent was answered (exit 5).
PEER_STOPPED = "its requester stopped of its own accord"


def run_timeout(args):
    """Seconds a tool may run: a test's 50 after the --server_wait (default here 60) a server
    may spend waiting for its client."""
    wait = 60
    for i, a in enumerate(args):
        if a == "--server_wait" and i + 1 < len(args):
            wait = int(args[i + 1])
        elif a.startswith("--server_wait="):
            wait = int(a.split("=", 1)[1])
    return max(wait, 60) + 50


def fail(msg, out="", err=""):
    print("FAIL:", msg)
    print("--- stdout\n" + out + "--- stderr\n" + err)
    sys.exit(1)


def c_hex(value, width):
    """C's %#0<width>x: no 0x prefix for 0 (printf's alternate form)."""
    return "%0*x" % (width, value) if value == 0 else "%#0*x" % (width, value)


def c_float(token, width, prec):
    """C's %-<width>.<prec>f of the printed token (glibc prints NaN as [-]nan)."""
    if token.lstrip("-") in ("nan", "inf"):
        return token.ljust(width)
    return "%-*.*f" % (width, prec, float(token))


ADDR = re.compile(r"^ (local|remote) address: LID (\S+) QPN (\S+) PSN (\S+)"
                  r"(?: OUT (\S+))?(?: RKey (\S+) VAddr (\S+))?$")
DEVICE = " Dual-port       : OFF\t\tDevice         : "


def render_address(line):
    """(shape, perftest's rendering) of an address line: BASIC_ADDR_FMT + READ_FMT + RDMA_FMT."""
    m = ADDR.match(line)
    if not m:
        return None, None
    side, lid, qpn, psn, out, rkey, vaddr = m.groups()
    try:
        text = " %s address: LID %s QPN %s PSN %s" % (
            side, c_hex(int(lid, 16), 4), c_hex(int(qpn, 16), 6), c_hex(int(psn, 16), 6))
        if out is not None:
            text += " OUT %s" % c_hex(int(out, 16), 4)
        if rkey is not None:
            text += " RKey %s VAddr %s" % (c_hex(int(rkey, 16), 8), c_hex(int(vaddr, 16), 16))
    except ValueError:
        return None, None
    # What must be equal: the side, the LID and OUT values, and which fields are printed.
    return (side, int(lid, 16), out and int(out, 16), rkey is not None), text


def render_gid(line):
    m = re.match(r"^ GID: ((?:\d+:){15}\d+)$", line)
    if not m:
        return None
    return " GID: " + ":".join("%02d" % int(x) for x in m.group(1).split(":"))


def render_row(kind, line, gbits):
    """(bytes, iterations, perftest's rendering) of a table row of header `kind`."""
    t = line.split()
    try:
        size, iters = int(t[0]), int(t[1])
        if kind == "bw" and len(t) == 5:
            if gbits and float(t[3]) < 0.1:  # print_full_bw_report's inc_accuracy
                text = " %-7d    %d           %s            %s            %s" % (
                    size, iters, c_float(t[2], 7, 6), c_float(t[3], 7, 6), c_float(t[4], 7, 6))
            else:
                text = " %-7d    %-10d       %s            %s\t\t   %s" % (
                    size, iters, c_float(t[2], 7, 2), c_float(t[3], 7, 2), c_float(t[4], 7, 6))
        elif kind == "lat" and len(t) == 9:
            f = [c_float(x, 7, 2) for x in t[2:]]
            text = (" %-7d %d          %s        %s      %s  \t       %s     \t%s\t\t%s \t\t%s"
                    % tuple([size, iters] + f))
        elif kind == "latdur" and len(t) == 4:
            text = " %-7d       %d            %s        %s" % (
                size, iters, c_float(t[2], 7, 2), c_float(t[3], 7, 2))
        else:
            return None
    except (ValueError, IndexError):
        return None
    return size, iters, text


def compare_stdout(side, want, got, duration):
    """Fails unless `got` (rocemu) prints as `want` (perftest 4.5) line by line."""
    wl, gl = want.split("\n"), got.split("\n")
    kind, gbits = None, False
    for i in range(max(len(wl), len(gl))):
        w = wl[i] if i < len(wl) else "<no line>"
        g = gl[i] if i < len(gl) else "<no line>"
        where = "%s stdout line %d" % (side, i + 1)
        why = None
        if w.startswith(" #bytes"):
            kind = "latdur" if "tps average" in w else "lat" if "t_min" in w else "bw"
            gbits = "Gb/sec" in w
            why = None if w == g else "header"
        elif kind and w and not w.startswith("-"):
            rw, rg = render_row(kind, w, gbits), render_row(kind, g, gbits)
            if rw is None or rw[2] != w:
                fail("%s: the sample's row does not print as perftest's format: %r" % (where, w))
            if rg is None or rg[2] != g:
                why = "row not in perftest's format (want e.g. %r)" % w
            elif rg[0] != rw[0] or (not duration and rg[1] != rw[1]):
                why = "#bytes/#iterations differ"
        elif w.startswith(DEVICE):
            why = None if g.startswith(DEVICE) and len(g) > len(DEVICE) else "device line"
        elif ADDR.match(w):
            shape_w, text_w = render_address(w)
            shape_g, text_g = render_address(g)
            if text_w != w:
                fail("%s: the sample's address line is not perftest's format: %r" % (where, w))
            if text_g != g:
                why = "address line not in perftest's format"
            elif shape_g != shape_w:
                why = "address line's side, LID, OUT or fields differ"
        elif w.startswith(" GID: "):
            if render_gid(w) != w:
                fail("%s: the sample's GID line is not perftest's format: %r" % (where, w))
            why = None if render_gid(g) == g else "GID line not in perftest's format"
        else:
            if w.startswith("-"):
                kind = None
            why = None if w == g else "line differs"
        if why:
            print("FAIL: %s: %s\n  perftest 4.5: %r\n  rocemu:       %r" % (where, why, w, g))
            print("--- perftest 4.5 %s stdout\n%s--- rocemu %s stdout\n%s" % (side, want, side, got))
            sys.exit(1)
    return len(wl)


def compare(samples, name, tool, args):
    with open(os.path.join(samples, name + ".client.stdout")) as f:
        want_client = f.read()
    with open(os.path.join(samples, name + ".server.stdout")) as f:
        want_server = f.read()
    fd, server_path = tempfile.mkstemp(prefix="rocemu-perftest-server-")
    os.close(fd)
    env = dict(os.environ, PERFTEST_2HOST_SERVER_STDOUT=server_path)
    try:
        p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=110, env=env)
        with open(server_path) as f:
            got_server = f.read()
    finally:
        os.unlink(server_path)
    if p.returncode != 0:
        fail("exit %d" % p.returncode, p.stdout, p.stderr)
    duration = "-D" in args
    n = compare_stdout("client", want_client, p.stdout, duration)
    m = compare_stdout("server", want_server, got_server, duration)
    print("ok: %s: client's %d and server's %d lines print as perftest 4.5's" % (name, n, m))


def main():
    mode, tool, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if mode == "compare":
        return compare(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
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
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=run_timeout(args))
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
    if p.returncode != 0 and PEER_STOPPED in err:
        print("--- stdout\n" + out + "--- stderr\n" + err)
        print("stopped: the peer stopped sending with everything it sent answered")
        sys.exit(5)
    if p.returncode != 0:
        fail("exit %d" % p.returncode, out, err)
    report = mode.endswith("-report")
    mode = mode[:-len("-report")] if report else mode
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
    # -R: the preamble says the QPs and the data exchange went through rdma_cm.
    method = " Data ex. method : " + ("rdma_cm" if "-R" in args else "Ethernet")
    if "-T" in args:  # -T: perftest's " \tTOS    : %d" on the same line
        method += " \tTOS    : %d" % int(args[args.index("-T") + 1])
    if any(l.startswith(" Data ex. method") for l in lines) and method not in lines:
        fail("want %r in the preamble" % method, out, err)
    iters = int(args[args.index("-n") + 1])
    if mode.startswith("bw") and "-q" in args:  # perftest's #iterations: -n x -q
        iters *= int(args[args.index("-q") + 1])
    sizes = [1 << i for i in range(1, 24)] if all_sizes else [int(args[args.index("-s") + 1])]
    first = lines.index(header) + 1
    rows = [lines[first + i].split() for i in range(len(sizes)) if first + i < len(lines)]
    with open(json_path) as f:
        results = json.load(f)["results"]
    os.unlink(json_path)
    if [r.get("bytes") for r in results] != sizes:
        fail("JSON results %r" % results, out, err)
    for size, row, res in zip(sizes, rows, results):
        check_row(mode, nopeak, size, iters, row, res, out, err, all_sizes, rate_only, report)
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


def check_row(mode, nopeak, size, iters, row, res, out, err, all_sizes, rate_only=False,
              report=False):
    if len(row) < 2 or not row[0].isdigit() or int(row[0]) != size or int(row[1]) != iters:
        fail("row %r: want %d bytes, %d iterations" % (row, size, iters), out, err)
    vals = [float(x) for x in row[2:]]
    if report and mode.startswith("bw") and len(vals) == 3 and vals == [0.0, 0.0, 0.0]:
        print("zeros: the client reported every rate as 0 (perftest does when its clock "
              "calibration fails, r^2 < 0.9): row %r" % row)
        sys.exit(4)
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
