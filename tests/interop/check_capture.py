#!/usr/bin/python3
"""check_capture.py CAPTURE ENDPOINT_IP MIN_FRAMES — independent check of a recorded interop run.

Every RoCEv2 frame on the wire (rocemu's and the guest rxe's) must carry an ICRC that
scapy.contrib.roce recomputes (IPv4 only; /work/shared/INTEROP.md: it matched every IPv4 frame
of real rxe), rocemu's must use P_Key 0xFFFF, BTH version 0 and UDP port 4791, and rocemu must
have sent at least MIN_FRAMES RoCEv2 frames. Prints an opcode histogram per sender.
"""
import collections
import sys

from scapy.all import Ether, raw, rdpcap
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP

path, endpoint_ip, min_frames = sys.argv[1], sys.argv[2], int(sys.argv[3])
hist = collections.defaultdict(collections.Counter)
bad = []
ours = 0
for i, pkt in enumerate(rdpcap(path)):
    if IP not in pkt or UDP not in pkt or pkt[UDP].dport != 4791 or BTH not in pkt:
        continue
    sender = "rocemu" if pkt[IP].src == endpoint_ip else pkt[IP].src
    hist[sender][pkt[BTH].opcode] += 1
    wire = raw(pkt)
    again = Ether(wire)
    again[BTH].icrc = None
    if raw(again)[-4:] != wire[-4:]:
        bad.append("frame %d from %s: ICRC mismatch" % (i + 1, sender))
    if sender == "rocemu":
        ours += 1
        if pkt[BTH].pkey != 0xFFFF or pkt[BTH].version != 0:
            bad.append("frame %d: P_Key 0x%x version %d" % (i + 1, pkt[BTH].pkey, pkt[BTH].version))
for sender, counts in sorted(hist.items()):
    print("%s: %s" % (sender, ", ".join("opcode 0x%02x x%d" % kv for kv in sorted(counts.items()))))
for b in bad[:20]:
    print("BAD", b)
if ours < min_frames:
    print("BAD rocemu sent %d RoCEv2 frames, expected at least %d" % (ours, min_frames))
    sys.exit(1)
print("capture check: %d frames from rocemu, %d problems" % (ours, len(bad)))
sys.exit(1 if bad else 0)
