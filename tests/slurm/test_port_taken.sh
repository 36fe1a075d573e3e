#!/usr/bin/env bash
# slurm-up.sh with its base port taken: it must refuse before starting anything, naming
# RK_SLURM_PORT and the port, and leave no daemon behind. Without root or Slurm the
# script cannot get that far: skipped (77).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
up=$here/../../scripts/slurm-up.sh
[ "$(id -u)" -eq 0 ] || { echo "not root: skipped"; exit 77; }
command -v slurmctld >/dev/null || { echo "no slurmctld: skipped"; exit 77; }
lab=$(mktemp -d)
trap 'kill "$holder" 2>/dev/null; rm -rf "$lab"' EXIT
# Hold a free port (the kernel picks it) open in listen state for the test's life.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(120)' >"$lab/port" &
holder=$!
for _ in $(seq 50); do [ -s "$lab/port" ] && break; sleep 0.1; done
port=$(cat "$lab/port")
out=$(RK_SLURM_PORT=$port bash "$up" "$lab/lab" 1 1 2>&1)
rc=$?
fail=0
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, want 1: $out"; fail=1; }
case $out in *"RK_SLURM_PORT"*"$port"* | *"$port"*"RK_SLURM_PORT"*) ;; *) echo "FAIL: message names neither RK_SLURM_PORT nor $port: $out"; fail=1;; esac
[ ! -e "$lab/lab/etc/slurm.conf" ] || { echo "FAIL: it wrote a slurm.conf before refusing"; fail=1; }
out=$(RK_SLURM_PORT=x1 bash "$up" "$lab/lab" 1 1 2>&1); rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: RK_SLURM_PORT=x1: exit $rc, want 2: $out"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: refused port $port naming RK_SLURM_PORT; refused a non-number"
exit $fail
