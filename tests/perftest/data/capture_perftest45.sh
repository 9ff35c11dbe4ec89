# Guest script (scripts/interop/run_guest.sh --script): runs Debian 12's perftest 4.5 inside
# the rxe guest, server and client on the same rxe0 (loopback through the guest's own address),
# once per mode of tests/perftest/data/perftest-4.5/README.md, and prints each side's stdout
# and stderr base64-encoded between "ROCEMU-SAMPLE BEGIN name" and "ROCEMU-SAMPLE END" lines
# (tests/perftest/data/extract_samples.py turns the serial log back into files).
me=10.77.0.10
port=18600
out=/tmp/samples
mkdir -p $out
n=0
run() {  # run NAME TOOL ARGS... (only the NAMEs listed in /tmp/only, if given: --file only=F)
  name=$1; tool=$2; shift 2
  [ -f /tmp/only ] && ! grep -qx "$name" /tmp/only && return
  port=$((port + 1))
  timeout 120 $tool -d rxe0 -x 1 -F -u 18 -p $port "$@" >$out/$name.server.stdout 2>$out/$name.server.stderr &
  spid=$!
  sleep 1
  timeout 120 $tool -d rxe0 -x 1 -F -u 18 -p $port "$@" $me >$out/$name.client.stdout 2>$out/$name.client.stderr
  crc=$?
  wait $spid
  src=$?
  echo "$tool $* -> server $src client $crc" | tee -a $out/rcs.txt
  [ $crc -eq 0 ] && [ $src -eq 0 ] || n=$((n + 1))
}
run write_bw ib_write_bw -s 65536 -n 200
run write_bw_a ib_write_bw -a -n 5
run write_bw_b ib_write_bw -s 65536 -n 200 -b
run write_bw_q2 ib_write_bw -s 65536 -n 200 -q 2
run write_bw_D ib_write_bw -s 65536 -D 2
run write_bw_gbits ib_write_bw -s 65536 -n 200 --report_gbits
run send_bw ib_send_bw -s 65536 -n 200
run send_bw_a ib_send_bw -a -n 5
run send_bw_b ib_send_bw -s 65536 -n 200 -b
run send_bw_q2_gbits ib_send_bw -s 65536 -n 200 -q 2 --report_gbits
run send_bw_D ib_send_bw -s 65536 -D 2
run read_bw ib_read_bw -s 65536 -n 200
run read_bw_a ib_read_bw -a -n 5
run read_bw_q2 ib_read_bw -s 65536 -n 200 -q 2
run read_bw_b ib_read_bw -s 65536 -n 200 -b
run atomic_bw ib_atomic_bw -n 200
run atomic_bw_cas ib_atomic_bw -n 200 -A CMP_AND_SWAP
run atomic_bw_q2 ib_atomic_bw -n 200 -q 2
run write_lat ib_write_lat -s 64 -n 100
run write_lat_a ib_write_lat -a -n 5
run write_lat_D ib_write_lat -s 64 -D 2
run send_lat ib_send_lat -s 64 -n 100
run send_lat_a ib_send_lat -a -n 5
run read_lat ib_read_lat -s 64 -n 100
run read_lat_a ib_read_lat -a -n 5
run atomic_lat ib_atomic_lat -n 100
run atomic_lat_cas ib_atomic_lat -n 100 -A CMP_AND_SWAP
ib_write_bw --version > $out/version.txt 2>&1
for f in $out/*; do
  echo "ROCEMU-SAMPLE BEGIN $(basename $f)"
  base64 $f
  echo "ROCEMU-SAMPLE END"
done
exit $n
