#!/usr/bin/env bash
# Meson test wrapper: start an emulated 4 x 8-GPU Slurm cluster under the build
# folder (scripts/slurm-up.sh), run one Slurm test against it, tear it down by
# PID whatever happens. Skips (77) only where Slurm cannot run at all: no
# slurmctld/munged installed, not root, or rubickd built without libslurm.
#   usage: run.sh [--dbd] TEST.py     (--dbd: with slurmdbd, for sacct)
set -uo pipefail
if [ "${1:-}" = --dbd ]; then
	export RK_SLURM_DBD=1
	shift
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${RK_BUILD_DIR:-$root/build}
for b in slurmctld slurmd munged; do
	command -v "$b" >/dev/null || { echo "SKIP: $b not installed (scripts/install-deps.sh)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the emulated Slurm cluster needs root"; exit 77; }
if [ "${RK_SLURM_DBD:-0}" = 1 ]; then # accounting through slurmdbd (scripts/slurm-up.sh)
	for b in mariadbd mariadb-install-db slurmdbd sacct; do
		command -v "$b" >/dev/null || { echo "SKIP: $b not installed (scripts/install-deps.sh)"; exit 77; }
	done
fi
# A fresh folder per run: two test runs sharing a build folder must not share a cluster.
lab=$(mktemp -d "$build/slurm-lab-XXXXXX")
# A port per lab so that the Slurm tests of several builds may overlap; below the
# ephemeral range (32768+), where a listener on port 0 could already sit. A port
# found taken (slurm-up.sh fails) is retried with the next candidate.
trap 'bash "$root/scripts/slurm-down.sh" "$lab" >/dev/null 2>&1' EXIT
base=$(cksum <<<"$lab" | cut -d' ' -f1)
for try in 0 1 2 3; do
	export RK_SLURM_PORT=$((10000 + (base + 997 * try) % 20000))
	bash "$root/scripts/slurm-up.sh" "$lab" 4 8 && break
	bash "$root/scripts/slurm-down.sh" "$lab" >/dev/null 2>&1
	[ "$try" = 3 ] && { echo "FAIL: the emulated cluster did not start"; tail -20 "$lab"/log/*; exit 1; }
done
export SLURM_CONF=$lab/etc/slurm.conf RK_SLURM_LAB=$lab
/usr/bin/python3 "$here/$1"
