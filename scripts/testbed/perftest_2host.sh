#!/usr/bin/env bash
# perftest_2host.sh — a 2-host run of a rocemu perftest tool: server and client in two network
# namespaces joined by a veth pair, each running its own DPDK af_packet port on its end
# (docs/perftest.md "Two hosts"). Needs root (ip netns, veth).
#
# usage: perftest_2host.sh TOOL [tool options...]
#   e.g. perftest_2host.sh build/apps/perftest/rocemu_write_bw -s 65536 -n 200
# Creates rocemu-pt-<pid>-a/-b (namespaces) and veth rocemu-a<pid>/rocemu-b<pid> with
# 10.91.0.1/24 (client) and 10.91.0.2/24 (server), MTU 9000 (for -m 2048/4096); everything
# is removed on exit (trap).
# Prints the client's output on stdout and the server's (prefixed "server| ") on stderr; exits
# with the client's status (the server's if it failed). With PERFTEST_2HOST_SERVER_STDOUT=FILE
# the server's stdout goes to FILE instead, untouched (its stderr still to stderr, prefixed).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 TOOL [options]" >&2; exit 2; }
tool=$(readlink -f "$1"); shift
[[ -x "$tool" ]] || { echo "$0: $tool is not executable" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root (ip netns, veth)" >&2; exit 2; }

tag=$$
nsa=rocemu-pt-$tag-a nsb=rocemu-pt-$tag-b
va=rocemu-a$tag vb=rocemu-b$tag
port=$((20000 + tag % 20000))
out=$(mktemp -d /tmp/rocemu-pt-XXXXXX)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null || true
  ip netns del "$nsa" 2>/dev/null || true
  ip netns del "$nsb" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT INT TERM

ip netns add "$nsa"
ip netns add "$nsb"
ip link add "$va" type veth peer name "$vb"
ip link set "$va" netns "$nsa"
ip link set "$vb" netns "$nsb"
ip -n "$nsa" addr add 10.91.0.1/24 dev "$va"
ip -n "$nsb" addr add 10.91.0.2/24 dev "$vb"
for ns in "$nsa" "$nsb"; do ip -n "$ns" link set lo up; done
# MTU 9000: IB MTU 2048/4096 frames (up to 4170 bytes) must fit the veth (docs/perftest.md).
ip -n "$nsa" link set "$va" mtu 9000
ip -n "$nsb" link set "$vb" mtu 9000
ip -n "$nsa" link set "$va" up
ip -n "$nsb" link set "$vb" up
# The kernel owns the same addresses and answers RoCEv2 (UDP 4791) with ICMP port
# unreachable: rate-limit that to a trickle (the endpoints count and drop those frames).
for ns in "$nsa" "$nsb"; do
  ip netns exec "$ns" sysctl -qw net.ipv4.icmp_ratelimit=1000000 || true
done

# EAL pins each process to lcore 0 by default: the server takes core 1, so the two busy
# pollers do not time-share one core (which costs milliseconds of latency).
# The server writes its own --out_json file (the client's is the one asked for).
server_eal=(-- -l 1)
server_args=()
for a in "$@"; do
  [[ "$a" == "--" ]] && server_eal=()
  case "$a" in --out_json*) server_args+=("--out_json=$out/server.json") ;; *) server_args+=("$a") ;; esac
done
if [[ -n "${PERFTEST_2HOST_SERVER_STDOUT:-}" ]]; then
  ip netns exec "$nsb" "$tool" -d "$vb" -p "$port" --server_wait=60 "${server_args[@]}" \
    "${server_eal[@]}" >"$PERFTEST_2HOST_SERVER_STDOUT" 2>"$out/server.log" &
else
  ip netns exec "$nsb" "$tool" -d "$vb" -p "$port" --server_wait=60 "${server_args[@]}" \
    "${server_eal[@]}" >"$out/server.log" 2>&1 &
fi
server_pid=$!
set +e
ip netns exec "$nsa" "$tool" -d "$va" -p "$port" --connect_timeout=20 "$@" 10.91.0.2
client_rc=$?
wait "$server_pid"
server_rc=$?
server_pid=
set -e
# The server's table (perftest prints one on both sides) goes to stderr.
echo "--- server (exit $server_rc)" >&2
sed 's/^/server| /' "$out/server.log" >&2
if [[ $server_rc -ne 0 ]]; then
  [[ $client_rc -eq 0 ]] && client_rc=$server_rc
fi
exit "$client_rc"
