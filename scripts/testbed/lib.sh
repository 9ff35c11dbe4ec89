# shellcheck shell=bash disable=SC2034  # TB_* variables are this library's interface
# lib.sh — the veth testbed, sourced by scripts/testbed/perftest.sh and workload.sh
# (docs/testbed.md). One network namespace per host of a run's topology plus one for the
# switch process (build/apps/rocemu-switch), one veth pair per host link: the switch end in
# the switch namespace, the host end in the host's namespace carrying the host's topology
# MAC and IPv4. The soft switch does not answer ARP, so every host gets a static neighbour
# entry for every other host's address -> its gateway MAC (the switch port facing it); the
# switch forwards any IPv4 frame by destination, so the kernel's TCP side channels cross it
# like the RoCEv2 traffic. The addressing comes from `rocemu-switch CONFIG --plan`.
# Needs root (ip netns, veth).
#
# Interface (keep it: other scripts build on it):
#   tb_up CONFIG_FILE   build the namespaces, start the switch, wait for it; sets TB_HOSTS
#   tb_ns HOST          namespace of HOST          tb_ip HOST     its IPv4
#   tb_iface HOST       its interface (host end)   tb_exec HOST CMD...  run CMD in its namespace
#   tb_spawn HOST CMD...  the same in the background, TB_PID = CMD's pid
#   tb_down             SIGINT to the switch (it prints its summary), remove every namespace
#                       this run made, print where TB_OUT is; idempotent (also run by the
#                       caller's trap)
# Environment:
#   TB_PREFIX      name prefix of the namespaces (default rocemu-tb<pid>)
#   TB_OUT         directory for logs and the switch summary (default a new mktemp dir)
#   TB_BUILD       build directory (default build); TB_SWITCH_BIN (default TB_BUILD/apps/rocemu-switch)
#   TB_PORTS       switch port backend: af_packet (default) or af_xdp (needs hugepages)
#   TB_SWITCH_EAL  EAL arguments of the switch (default "-l 1": its own core)
#   TB_SWITCH_ARGS more rocemu-switch options (e.g. "--policy static"; the scripts' --policy,
#                  --agent-model and --agent-interval-us add to it)
#   TB_IDLE_SLEEP_US  idle backoff of every poller (switch, tools, hosts): after 256 idle
#                  iterations a poll loop sleeps until its next event, at most this long
#                  (default 20; 0 = busy polling: more pollers than cores then time-slice
#                  in milliseconds, docs/testbed.md)
# After tb_up: TB_SWITCH_LOG (switch stdout+stderr), TB_SUMMARY (switch_summary.csv, written
# when the switch stops).

TB_PREFIX=${TB_PREFIX:-rocemu-tb$$}
TB_BUILD=${TB_BUILD:-build}
TB_SWITCH_BIN=${TB_SWITCH_BIN:-$TB_BUILD/apps/rocemu-switch}
TB_PORTS=${TB_PORTS:-af_packet}
TB_SWITCH_EAL=${TB_SWITCH_EAL:--l 1}
TB_SWITCH_ARGS=${TB_SWITCH_ARGS:-}
TB_IDLE_SLEEP_US=${TB_IDLE_SLEEP_US:-20}
TB_OUT=${TB_OUT:-}
TB_HOSTS=()
TB_SWITCH_PID=
TB_NAMESPACES=()
declare -A TB_IP_OF=() TB_IFACE_OF=() TB_MAC_OF=() TB_GW_OF=()

tb_ns() { echo "${TB_PREFIX}-$1"; }
tb_ip() { echo "${TB_IP_OF[$1]}"; }
tb_iface() { echo "${TB_IFACE_OF[$1]}"; }
tb_exec() {
  local h=$1
  shift
  ip netns exec "$(tb_ns "$h")" "$@"
}

# tb_spawn HOST CMD...: CMD in HOST's namespace in the background; TB_PID is its pid (not a
# subshell's, unlike `tb_exec ... &`), so `kill "$TB_PID"` reaches it. Redirect the call.
tb_spawn() {
  local h=$1
  shift
  ip netns exec "$(tb_ns "$h")" "$@" &
  TB_PID=$!
}

_tb_log() { echo "testbed: $*" >&2; }

# _tb_quiet NS: no IPv6 (router/neighbour solicitations the switch would count as drops),
# ICMP errors rate-limited to a trickle (the kernel owns the RoCE address too and answers
# UDP 4791 with port unreachable, like scripts/testbed/perftest_2host.sh).
_tb_quiet() {
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
  ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
  ip netns exec "$1" sysctl -qw net.ipv4.icmp_ratelimit=1000000 >/dev/null 2>&1 || true
  ip -n "$1" link set lo up
}

# _tb_no_offload NS IFACE: the kernel computes TCP/UDP checksums and segments in software
# on IFACE. veth hands checksum-offloaded (CHECKSUM_PARTIAL) and GSO frames to its peer as
# they are; read by the switch's af_packet port and written to another veth, they would
# arrive with an unfinished checksum (dropped by the receiving kernel) or above the MTU.
# No ethtool here: the legacy ethtool ioctls (ETHTOOL_STXCSUM 0x17, STSO 0x1f, SGSO 0x24)
# from Debian's python3.
_tb_no_offload() {
  ip netns exec "$1" /usr/bin/python3 - "$2" <<'PY'
import array, fcntl, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for cmd in (0x17, 0x1f, 0x24):  # ETHTOOL_STXCSUM, ETHTOOL_STSO, ETHTOOL_SGSO: off
    buf = array.array("B", struct.pack("II", cmd, 0))
    ifr = struct.pack("16sP", sys.argv[1].encode(), buf.buffer_info()[0])
    fcntl.ioctl(s.fileno(), 0x8946, ifr)  # SIOCETHTOOL
PY
}

_tb_add_ns() {
  ip netns add "$1" || return 1
  TB_NAMESPACES+=("$1")
  _tb_quiet "$1"
}

tb_up() {
  local config=$1
  [[ -f "$config" ]] || { _tb_log "no configuration file $config"; return 2; }
  [[ $(id -u) -eq 0 ]] || { _tb_log "needs root (ip netns, veth)"; return 2; }
  [[ -x "$TB_SWITCH_BIN" ]] || { _tb_log "$TB_SWITCH_BIN is not built"; return 2; }
  TB_SWITCH_BIN=$(readlink -f "$TB_SWITCH_BIN")
  if [[ "$TB_PORTS" == af_xdp ]] && ! awk '/^HugePages_Free:/ { exit !($2 > 0) }' /proc/meminfo; then
    _tb_log "af_xdp ports need free hugepages (its UMEM cannot live in --no-huge memory): scripts/hugepages.sh 512"
    return 2
  fi
  if [[ -z "$TB_OUT" ]]; then
    TB_OUT=$(mktemp -d /tmp/rocemu-tb-XXXXXX)
  fi
  mkdir -p "$TB_OUT"
  local plan
  plan=$("$TB_SWITCH_BIN" "$config" --plan) || return 2
  printf '%s\n' "$plan" >"$TB_OUT/plan.tsv"
  local sw_ns=${TB_PREFIX}-sw
  _tb_add_ns "$sw_ns" || return 1
  local host ip hmac gw sdev hdev rate
  while IFS=$'\t' read -r host ip hmac gw sdev hdev rate; do
    [[ "$host" == host ]] && continue
    [[ "$host" == sw ]] && { _tb_log "a host may not be named 'sw' (the switch's namespace)"; return 2; }
    TB_HOSTS+=("$host")
    TB_IP_OF[$host]=$ip TB_IFACE_OF[$host]=$hdev TB_MAC_OF[$host]=$hmac TB_GW_OF[$host]=$gw
    local ns
    ns=$(tb_ns "$host")
    _tb_add_ns "$ns" || return 1
    ip link add "$hdev" netns "$ns" type veth peer name "$sdev" netns "$sw_ns" || return 1
    ip -n "$ns" link set "$hdev" address "$hmac"
    _tb_no_offload "$ns" "$hdev" || return 1
    # NOARP: a DPDK port start on this interface flushes its neighbour entries, permanent
    # ones included (ethdev replays the MAC with SIOCSIFHWADDR). rocemu's programs write
    # them back (fabric/kernel_neighbours.h); should another program not, with ARP off the
    # kernel re-creates them without asking (lladdr = its own MAC, which the switch ignores:
    # it forwards by IPv4 destination and rewrites both MACs) instead of sending ARP
    # requests nobody answers.
    ip -n "$ns" link set "$hdev" arp off
    ip -n "$ns" addr add "$ip/32" dev "$hdev"
    ip -n "$ns" link set "$hdev" up
    ip -n "$sw_ns" link set "$sdev" up
  done <<<"$plan"
  # Switch-to-switch links (dumbbell, Clos): both ends are the switch process's, a veth
  # pair inside its namespace.
  local links link adev bdev
  links=$("$TB_SWITCH_BIN" "$config" --switch-links) || return 2
  while IFS=$'\t' read -r link _ _ adev bdev _; do
    [[ "$link" == link ]] && continue
    ip -n "$sw_ns" link add "$adev" type veth peer name "$bdev" || return 1
    ip -n "$sw_ns" link set "$adev" up
    ip -n "$sw_ns" link set "$bdev" up
  done <<<"$links"
  # Every other host: a /32 route out of the host's only interface, and a permanent
  # neighbour entry to the switch port facing this host (the tools read it from /proc/net/arp).
  local h o
  for h in "${TB_HOSTS[@]}"; do
    for o in "${TB_HOSTS[@]}"; do
      [[ "$h" == "$o" ]] && continue
      ip -n "$(tb_ns "$h")" route add "${TB_IP_OF[$o]}/32" dev "${TB_IFACE_OF[$h]}"
      ip -n "$(tb_ns "$h")" neigh replace "${TB_IP_OF[$o]}" lladdr "${TB_GW_OF[$h]}" \
        dev "${TB_IFACE_OF[$h]}" nud permanent
    done
  done
  TB_SWITCH_LOG=$TB_OUT/switch.log
  TB_SUMMARY=$TB_OUT/switch/switch_summary.csv
  # shellcheck disable=SC2086  # TB_SWITCH_ARGS and TB_SWITCH_EAL are word lists
  ip netns exec "$sw_ns" "$TB_SWITCH_BIN" "$config" --ports "$TB_PORTS" --out "$TB_OUT/switch" \
    --idle-sleep-us "$TB_IDLE_SLEEP_US" $TB_SWITCH_ARGS \
    -- $TB_SWITCH_EAL >"$TB_SWITCH_LOG" 2>&1 &
  TB_SWITCH_PID=$!
  local i
  for ((i = 0; i < 300; i++)); do
    grep -q '^rocemu-switch: ready' "$TB_SWITCH_LOG" 2>/dev/null && return 0
    if ! kill -0 "$TB_SWITCH_PID" 2>/dev/null; then
      wait "$TB_SWITCH_PID" 2>/dev/null
      _tb_log "rocemu-switch exited before it was ready:"
      cat "$TB_SWITCH_LOG" >&2
      TB_SWITCH_PID=
      return 1
    fi
    sleep 0.1
  done
  _tb_log "rocemu-switch not ready after 30 s:"
  cat "$TB_SWITCH_LOG" >&2
  return 1
}

tb_down() {
  local ran=${TB_SWITCH_PID:+1}
  if [[ -n "$TB_SWITCH_PID" ]]; then
    kill -INT "$TB_SWITCH_PID" 2>/dev/null || true
    local i
    for ((i = 0; i < 100; i++)); do
      kill -0 "$TB_SWITCH_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$TB_SWITCH_PID" 2>/dev/null || true
    wait "$TB_SWITCH_PID" 2>/dev/null || true
    TB_SWITCH_PID=
  fi
  local ns
  for ns in "${TB_NAMESPACES[@]}"; do
    [[ "$ns" == "$TB_PREFIX"-* ]] || continue  # only what this run made
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  TB_NAMESPACES=()
  [[ -n "$ran" ]] && _tb_log "logs and switch summary in $TB_OUT"
  return 0
}
