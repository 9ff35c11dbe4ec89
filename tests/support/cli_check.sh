# cli_check.sh — sourced by the command-line tests (tests/*/cli_test.sh): one `check` that runs
# nothing itself but judges a command's exit status and output, and a `fail` flag the test
# exits with.
#   out=$(CMD 2>&1); check NAME EXPECTED_RC $? "$out" NEEDLE...
# passes when the status is EXPECTED_RC and every NEEDLE occurs in the output (fixed strings).
fail=0
check() {  # name expected_rc actual_rc output needles...
  local name=$1 want=$2 got=$3 out=$4; shift 4
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want"; echo "$out"; fail=1; return; fi
  for n in "$@"; do
    if ! grep -qF -- "$n" <<<"$out"; then echo "FAIL $name: output lacks '$n'"; echo "$out"; fail=1; fi
  done
  echo "ok   $name"
}
