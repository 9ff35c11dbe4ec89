#!/usr/bin/python3
"""fuzz_corpus.py — seed corpora for the fuzz targets of tests/fuzz/, from what the repo ships.

  scripts/fuzz_corpus.py --out DIR [--stamp FILE]

Writes DIR/<target>/<sha1> files (emptied first), one per seed, in the input format of each
target (its header comment says what byte 0 means):
  fuzz_nic_rx        every RoCEv2 frame of the golden rxe captures (tests/conformance/data),
                     raw (mode 0) and addressed to the victim QP (mode 1); PFC XOFF (priority
                     3, all), XON and an 802.3x PAUSE from the captures' MAC addresses (raw)
  fuzz_nic_requester scripted peers (every message answered, with time passing between, and
                     the harness's mutator), and the captures' responses (ACK, READ response,
                     atomic ACK: BTH onward) as raw records after correct answers
  fuzz_cm            scripted handshakes, rejections and disconnections between the two state
                     machines, and every CM MAD of the captures (UD to QP1) raw from each side,
                     and aimed at a live connection
  fuzz_switch_rx     every frame of the captures (RoCEv2, TCP, ARP, IPv6), raw or IPv4 fixed
                     up, over the ingress ports in turn; PFC XOFF/XON frames and an 802.3x
                     PAUSE built from the captures' MAC addresses
  fuzz_arp           the captures' ARP requests, with our address = their target (accepted)
                     and another (refused), and their replies
  fuzz_run_config    every TOML file under configs/
  fuzz_cdf           configs/workloads/*.txt
  fuzz_model_file    configs/models/*.model, in each of the target's three modes
  fuzz_perftest_msg  the perftest side-channel messages of the captures (TCP ports 186xx):
                     108-byte keys, MTU messages, 40-byte reports (five 8-byte segments)
  fuzz_pingpong_msg  the captures' 52-byte rc_pingpong messages, and an RDMA-check INFO
                     message as rocemu-interop formats it
Needs /usr/bin/python3 with scapy (scripts/setup.sh installs python3-scapy).
"""
import argparse
import glob
import hashlib
import os
import shutil
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = os.path.join(ROOT, "tests", "conformance", "data")
TARGETS = ["fuzz_nic_rx", "fuzz_nic_requester", "fuzz_cm", "fuzz_switch_rx", "fuzz_arp", "fuzz_run_config", "fuzz_cdf",
           "fuzz_model_file", "fuzz_perftest_msg", "fuzz_pingpong_msg"]
ROCE_PORT = 4791
PFC_DST = bytes.fromhex("0180c2000001")


class Corpus:
    def __init__(self, out):
        self.out = out
        self.counts = {}

    def add(self, target, data):
        d = os.path.join(self.out, target)
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
        self.counts[target] = self.counts.get(target, 0) + 1


def read_captures():
    """(file name, [frame bytes]) for each golden capture, in order."""
    from scapy.utils import PcapNgReader
    out = []
    for path in sorted(glob.glob(os.path.join(CAPTURES, "*.pcapng"))):
        with PcapNgReader(path) as r:
            out.append((os.path.basename(path), [bytes(p) for p in r]))
    return out


def pfc_frame(src_mac, class_enable, quanta, opcode=0x0101):
    body = struct.pack("!HH8H", opcode, class_enable, *quanta)
    frame = PFC_DST + src_mac + struct.pack("!H", 0x8808) + body
    return frame + bytes(60 - len(frame))


def frames(c, captures):
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import ARP, Ether
    macs = set()
    for _, pkts in captures:
        for raw in pkts:
            p = Ether(raw)
            macs.add(raw[6:12])
            if UDP in p and p[UDP].dport == ROCE_PORT:
                for mode in (0, 1):
                    c.add("fuzz_nic_rx", bytes([mode]) + raw)
                bth = raw[14 + 20 + 8:] if raw[12:14] == b"\x08\x00" else b""
                if len(bth) >= 12 and 0x0d <= bth[0] <= 0x12:  # READ responses, ACKs
                    requester_seed(c, bth)
                # A CM MAD: UD SEND ONLY to QP1, the MAD after BTH and DETH.
                if len(bth) >= 12 + 8 + 256 and bth[0] == 0x64 and bth[5:8] == b"\x00\x00\x01":
                    mad = bth[20:20 + 256]
                    for side in (0, 0x80):
                        c.add("fuzz_cm", bytes([side | 4]) + struct.pack("!H", len(mad)) + mad)
                        c.add("fuzz_cm", bytes([side | 5]) + mad)
            # Switch: ingress port (bits 0-1) and raw (mode 0) or IPv4 fixed up (mode 1) in
            # turn; byte 1: time step. Dequeue one packet per port after each (bits 4-5 = 1).
            n = c.counts.get("fuzz_switch_rx", 0)
            c.add("fuzz_switch_rx", bytes([0x10 | (n // 4 % 2) << 2 | n % 4, 1]) + raw)
            if ARP in p:
                a = p[ARP]
                for_us = struct.unpack("!I", bytes(map(int, a.pdst.split("."))))[0]
                c.add("fuzz_arp", struct.pack("!I", for_us) + raw)
                c.add("fuzz_arp", struct.pack("!I", (for_us + 1) & 0xffffffff) + raw)
    # PFC: XOFF on priority 3 (the lossless class), on all, XON, and 802.3x PAUSE (opcode 1),
    # from each MAC seen; mode 2 makes the frame MAC control (opcode kept with bit 6).
    for mac in sorted(macs)[:4]:
        for ce, q in ((0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0]), (0xff, [0xffff] * 8),
                      (0xff, [0] * 8), (0x08, [0, 0, 0, 10, 0, 0, 0, 0])):
            for port in range(4):
                c.add("fuzz_switch_rx", bytes([0x10 | 2 << 2 | port, 2]) + pfc_frame(mac, ce, q))
        c.add("fuzz_switch_rx", bytes([0x50 | 2 << 2, 2]) + pfc_frame(mac, 0, [0xffff] + [0] * 7, 1))
        # The NIC pauses its own transmit on them (raw frames, mode 0): the harness's liveness
        # check waits a pause out, so an XOFF must not read as a QP that stopped answering.
        for ce, q, op in ((0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0], 0x0101), (0xff, [0xffff] * 8, 0x0101),
                          (0x08, [0] * 8, 0x0101), (0x00, [0xffff] + [0] * 7, 0x0001)):
            c.add("fuzz_nic_rx", b"\x00" + pfc_frame(mac, ce, q, op))
    # A drain after a burst (bit 7).
    c.add("fuzz_switch_rx", bytes([0x80, 0]) + captures[0][1][0])


def requester_seed(c, bth, answered=2):
    """fuzz_nic_requester: `answered` correct answers, then `bth` (a response's BTH onward,
    ICRC included: the target reseals it) as a raw record, then one more correct answer."""
    psn = bytes([0x12, 0x34, 0x56, 0])  # and the variant byte
    c.add("fuzz_nic_requester", psn + b"\x00" * answered + b"\x03" + struct.pack("!H", len(bth)) + bth
          + b"\x00")


def requester_scripts(c):
    """fuzz_nic_requester: whole conversations, from PSNs that wrap during the batch or not,
    in each variant (plain, byte window, paced, both)."""
    for psn in (b"\x00\x00\x00\x00", b"\xff\xff\xfc\x01", b"\x7f\xff\xff\x02", b"\x00\x10\x00\x03"):
        c.add("fuzz_nic_requester", psn + b"\x00" * 9)                    # every message answered
        c.add("fuzz_nic_requester", psn + b"\x00\x01\x02\x00" * 9)       # answers, time between
        c.add("fuzz_nic_requester", psn + b"\x01\x08\x00" * 4)           # silence: timeouts
        for seed in range(8):                                          # the mutator, with answers
            c.add("fuzz_nic_requester", psn + b"".join(
                b"\x02" + struct.pack("!Q", seed * 131 + i) + b"\x00" for i in range(6)))


def cm_scripts(c):
    """fuzz_cm: whole conversations (CmFuzzHarness::step's records)."""
    to_a, to_b = b"\x00", b"\x80"          # deliver the oldest MAD in flight to A / to B
    app_a, app_b = b"\x07", b"\x87"        # the application: accept (1), reject (0)
    wait = b"\x06\x01\x00"                 # 256 x 64 us
    both = to_b + app_b + b"\x01" + to_a + to_b + to_a + app_a + b"\x01" + to_b + to_a
    c.add("fuzz_cm", both)                                            # both connect
    c.add("fuzz_cm", both + app_a + b"\x00" + to_b + to_a + wait)     # then A disconnects
    c.add("fuzz_cm", to_b + app_b + b"\x00" + to_a + to_a + wait)     # B rejects A's REQ
    c.add("fuzz_cm", b"\x02\x82" + wait * 8)                          # both REQs lost
    c.add("fuzz_cm", to_b + app_b + b"\x01" + b"\x02" + wait + to_a + to_b)  # REP lost, resent
    c.add("fuzz_cm", both + b"\x03\x10\x01\x83\x11\x02" + wait)     # duplicates and garbles


def side_channel(c, captures):
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    for name, pkts in captures:
        streams = {}  # (src, sport, dst, dport) -> [payload segments]
        for raw in pkts:
            p = Ether(raw)
            if TCP in p and len(p[TCP].payload):
                key = (p[IP].src, p[TCP].sport, p[IP].dst, p[TCP].dport)
                streams.setdefault(key, []).append(bytes(p[TCP].payload))
        for segs in streams.values():
            for i, s in enumerate(segs):
                if len(s) == 52:
                    c.add("fuzz_pingpong_msg", b"\x00" + s)
                elif len(s) == 108:
                    c.add("fuzz_perftest_msg", b"\x00" + s)
                elif len(s) == 2:
                    c.add("fuzz_perftest_msg", b"\x01" + s)
                elif len(s) == 8 and i + 5 <= len(segs) and all(len(x) == 8 for x in segs[i:i + 5]):
                    for mode in (2, 3):
                        c.add("fuzz_perftest_msg", bytes([mode]) + b"".join(segs[i:i + 5]))
    # RDMA-check INFO (rdma_check_proto.h RC_INFO_FMT), NUL padded to 96 bytes.
    info = b"RDMACHECK %06x %06x %016x %08x %08x %016x" % (
        0x11, 0xde2123, 0x561d8d643000, 0x70f, 4 << 20, 1)
    c.add("fuzz_pingpong_msg", b"\x01" + info + bytes(96 - len(info)))


def files(c):
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "**", "*.toml"), recursive=True)):
        with open(path, "rb") as f:
            c.add("fuzz_run_config", f.read())
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "workloads", "*.txt"))):
        with open(path, "rb") as f:
            c.add("fuzz_cdf", f.read())
    for path in sorted(glob.glob(os.path.join(ROOT, "configs", "models", "*.model"))):
        with open(path, "rb") as f:
            model = f.read()
        for mode in (0, 1, 2):
            c.add("fuzz_model_file", bytes([mode]) + model)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--stamp", help="file to touch when done (meson's output)")
    a = ap.parse_args()
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    for t in TARGETS:
        os.makedirs(os.path.join(a.out, t))
    c = Corpus(a.out)
    captures = read_captures()
    if not captures:
        print(f"fuzz_corpus.py: no captures in {CAPTURES}", file=sys.stderr)
        return 1
    frames(c, captures)
    requester_scripts(c)
    cm_scripts(c)
    side_channel(c, captures)
    files(c)
    empty = [t for t in TARGETS if not c.counts.get(t)]
    if empty:
        print(f"fuzz_corpus.py: no seeds for {', '.join(empty)}", file=sys.stderr)
        return 1
    print("fuzz_corpus.py: " + ", ".join(f"{t} {c.counts[t]}" for t in TARGETS))
    if a.stamp:
        with open(a.stamp, "w") as f:
            f.write("\n".join(f"{t} {c.counts[t]}" for t in TARGETS) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
