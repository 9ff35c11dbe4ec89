#!/usr/bin/env bash
# bind_refusal_test.sh SRC_ROOT — scripts/hw/bind.sh refuses what it must never take, before
# touching anything: an interface with an address, one carrying a route, a virtual (non-PCI)
# interface, names and addresses that do not exist; an IPv6 link-local address alone is not
# a refusal. On a veth pair in a network namespace this test creates and removes, plus (read
# only, --dry-run) this machine's default-route interface. run.sh runs no command when the
# binding is refused; unbind.sh leaves alone a device it has no record of. Needs root: under
# CI=true its absence is a failure, otherwise the test is skipped (exit 77).
set -u
if [[ $(id -u) -ne 0 ]]; then
  [[ "${CI:-}" == true ]] && { echo "needs root (CI=true: failing, not skipping)"; exit 1; }
  echo "needs root; skipped"; exit 77
fi
SRC="$1"
HW="$SRC/scripts/hw"
ns=rocemu-hw$$
state="$(mktemp -d)"
export ROCEMU_HW_STATE_DIR="$state"
cleanup() { ip netns del "$ns" 2>/dev/null; rm -rf "$state"; }
trap cleanup EXIT INT TERM
fails=0
# expect_refusal WHAT TEXT CMD...: CMD exits 1 and its stderr has TEXT.
expect_refusal() {
  local what="$1" text="$2"; shift 2
  local err rc
  err="$("$@" 2>&1 >/dev/null)"; rc=$?
  if [[ $rc -eq 1 && "$err" == *"$text"* ]]; then
    echo "ok: $what: $err"
  else
    echo "FAIL: $what: exit $rc, stderr: $err (wanted exit 1 and '$text')"; fails=$((fails+1))
  fi
}
ip netns add "$ns" || exit 1
ip -n "$ns" link set lo up
ip -n "$ns" link add hwA type veth peer name hwB || exit 1
ip -n "$ns" link set hwA up; ip -n "$ns" link set hwB up
in_ns() { ip netns exec "$ns" "$@"; }

ip -n "$ns" addr add 10.77.0.1/24 dev hwA
expect_refusal "interface with an IPv4 address" "refusing hwA: it has an address (10.77.0.1/24)" \
  in_ns "$HW/bind.sh" --dry-run hwA
# run.sh: a refused binding runs no command.
marker="$state/ran"
expect_refusal "run.sh with a refused device" "refusing hwA: it has an address" \
  in_ns "$HW/run.sh" hwA -- touch "$marker"
[[ ! -e "$marker" ]] || { echo "FAIL: run.sh ran the command after a refused binding"; fails=$((fails+1)); }
rm -f "$marker"
ip -n "$ns" addr flush dev hwA scope global
ip -n "$ns" -6 addr add fd00:77::1/64 dev hwA nodad
expect_refusal "interface with a global IPv6 address" "it has an address (fd00:77::1/64)" \
  in_ns "$HW/bind.sh" --dry-run hwA
ip -n "$ns" -6 addr del fd00:77::1/64 dev hwA
ip -n "$ns" route add 10.78.0.0/24 dev hwA
expect_refusal "interface carrying a route (no address)" "refusing hwA: it carries a route (10.78.0.0/24" \
  in_ns "$HW/bind.sh" --dry-run hwA
ip -n "$ns" route del 10.78.0.0/24 dev hwA
# Only the kernel's automatic IPv6 link-local address and routes are left: they are no reason
# to refuse, so the next check speaks: a veth is no PCI device.
ll="$(ip -n "$ns" -6 -o addr show dev hwA scope link | awk '{print $4}')"
[[ "$ll" == fe80:* ]] || { echo "FAIL: hwA has no link-local address to test with ($ll)"; fails=$((fails+1)); }
expect_refusal "veth (only a link-local address)" "refusing hwA: not a PCI device" \
  in_ns "$HW/bind.sh" --dry-run hwA
expect_refusal "unknown interface" "no network interface 'nosuch0'" in_ns "$HW/bind.sh" --dry-run nosuch0
expect_refusal "absent PCI address" "no PCI device 0000:ff:1f.7" "$HW/bind.sh" --dry-run ff:1f.7
expect_refusal "unknown driver" "--driver must be vfio-pci or uio_pci_generic" \
  "$HW/bind.sh" --driver e1000 --dry-run 0000:ff:1f.7
# This machine's own uplink (it has an address and the default route): never taken.
up="$(ip -o route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i+1); exit}}')"
if [[ -n "$up" ]]; then
  expect_refusal "this machine's default-route interface $up" "refusing $up:" "$HW/bind.sh" --dry-run "$up"
fi
# unbind.sh: no record, nothing done, success.
err="$("$HW/unbind.sh" 0000:ff:1f.7 2>&1)"; rc=$?
if [[ $rc -eq 0 && "$err" == *"no record of its kernel driver, left alone"* ]]; then echo "ok: unbind without a record"
else echo "FAIL: unbind without a record: exit $rc: $err"; fails=$((fails+1)); fi
expect_refusal "unbind of an interface name" "give the PCI address" "$HW/unbind.sh" hwA
[[ -z "$(ls -A "$state")" ]] || { echo "FAIL: state left in $state: $(ls "$state")"; fails=$((fails+1)); }
echo "$fails failures"
[[ $fails -eq 0 ]]
