#!/usr/bin/python3
"""Host-side stand-in for rocemu's endpoint (scapy): proves the guest path without rocemu.

Runs inside run_guest.sh's namespace. Answers ARP for ROCEMU_ENDPOINT_IP on ROCEMU_IFACE, serves
ibv_rc_pingpong's TCP side channel as the server (port 18515, /work/shared/INTEROP.md), and
waits for the guest's first RoCEv2 packet to the advertised QP. Exit 0 only if that packet
arrives with the QPN we advertised, the PSN the guest advertised and an ICRC that scapy.contrib.roce recomputes.
We never ACK, so the guest's pingpong then fails by retry exhaustion (expected).
"""
import os
import socket
import sys
import threading

from scapy.all import ARP, Ether, AsyncSniffer, sendp, raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import UDP

IFACE = os.environ["ROCEMU_IFACE"]
PEER_IP = os.environ["ROCEMU_ENDPOINT_IP"]
BRIDGE_IP = os.environ["ROCEMU_BRIDGE_IP"]
MY_MAC = "02:00:0a:4d:00:02"
MY_QPN, MY_PSN = 0x000123, 0x00abcd
done = threading.Event()
result = {}


def gid_hex(ip):
    return "00000000000000000000ffff" + "".join("%02x" % int(x) for x in ip.split("."))


def on_frame(pkt):
    if ARP in pkt and pkt[ARP].op == 1 and pkt[ARP].pdst == PEER_IP:
        sendp(Ether(dst=pkt[Ether].src, src=MY_MAC) /
              ARP(op=2, hwsrc=MY_MAC, psrc=PEER_IP, hwdst=pkt[ARP].hwsrc, pdst=pkt[ARP].psrc),
              iface=IFACE, verbose=False)
        result["arp"] = True
    elif UDP in pkt and pkt[UDP].dport == 4791 and not done.is_set():
        wire = raw(pkt)
        again = Ether(wire)
        again[BTH].icrc = None
        result.update(opcode=pkt[BTH].opcode, dqpn=pkt[BTH].dqpn, psn=pkt[BTH].psn,
                      icrc_ok=raw(again)[-4:] == wire[-4:], dst_mac=pkt[Ether].dst)
        done.set()


sniffer = AsyncSniffer(iface=IFACE, prn=on_frame, store=False)
sniffer.start()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((BRIDGE_IP, 18515))
srv.listen(1)
srv.settimeout(60)
conn, _ = srv.accept()
conn.settimeout(30)
theirs = b""
while len(theirs) < 52:
    theirs += conn.recv(52 - len(theirs))
print("guest says", theirs.rstrip(b"\0").decode())
mine = "%04x:%06x:%06x:%s" % (0, MY_QPN, MY_PSN, gid_hex(PEER_IP))
conn.sendall(mine.encode() + b"\0")
done.wait(30)
sniffer.stop()
print("stand-in saw", result)
guest_psn = int(theirs.split(b":")[2], 16)
ok = (result.get("arp") and result.get("dqpn") == MY_QPN and result.get("psn") == guest_psn
      and result.get("icrc_ok") and result.get("dst_mac") == MY_MAC)
sys.exit(0 if ok else 1)
