# guest_fw_cfg.sh — sourced by the guests' /init (scripts/interop/guest_init.sh,
# scripts/hw/guest_init.sh), installed beside it as /guest_fw_cfg.sh: the protocol with
# scripts/interop/run_guest.sh. say() marks a line for the host; finish STATUS prints
# "ROCEMU-GUEST EXIT STATUS" and powers off; run_fw_cfg_script SHELL copies every fw_cfg file
# opt/rxe/<name> to /tmp/<name>, runs /tmp/script (opt/rxe/script) with SHELL in /tmp and
# finishes with its status.
say() { echo "ROCEMU-GUEST $*"; }
finish() { say "EXIT $1"; sync; poweroff -f; }
run_fw_cfg_script() {
  fw=/sys/firmware/qemu_fw_cfg/by_name/opt/rxe
  i=0
  while [ ! -e "$fw/script/raw" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$fw/script/raw" ] || { say "no fw_cfg opt/rxe/script"; finish 93; }
  for d in "$fw"/*; do
    name="$(basename "$d")"
    cp "$d/raw" "/tmp/$name" && chmod +x "/tmp/$name"
  done
  cd /tmp
  "$1" /tmp/script 2>&1
  finish $?
}
