#!/usr/bin/env bash
# in_netns.sh CMD... — runs CMD in a new network namespace rocemu-ext<pid> holding two veth
# pairs re0a-re0b and re1a-re1b (up, IPv6 off), removed on exit. Needs root: under CI=true
# its absence is a failure, otherwise the test is skipped (exit 77).
set -u
if [[ $(id -u) -ne 0 ]]; then
  [[ "${CI:-}" == true ]] && { echo "in_netns.sh: needs root (CI=true: failing, not skipping)"; exit 1; }
  echo "in_netns.sh: needs root; skipped"; exit 77
fi
ns=rocemu-ext$$
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
ip netns add "$ns" || exit 1
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null
ip -n "$ns" link set lo up
for i in 0 1; do
  ip -n "$ns" link add "re${i}a" type veth peer name "re${i}b" || exit 1
  ip -n "$ns" link set "re${i}a" up
  ip -n "$ns" link set "re${i}b" up
done
ip netns exec "$ns" "$@"
