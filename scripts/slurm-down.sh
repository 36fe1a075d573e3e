#!/usr/bin/env bash
# Stop the emulated cluster started by scripts/slurm-up.sh LAB, by PID only
# (docs/slurm.md, "Slurm 22.05 facts", Teardown): cancel jobs, `scontrol shutdown`, then the
# recorded PIDs, leftover slurmstepd trees of this LAB, slurmdbd and MariaDB
# (RK_SLURM_DBD=1), and munged.
#   usage: scripts/slurm-down.sh [LAB]
set -uo pipefail
lab=${1:-${RK_SLURM_LAB:-/tmp/rubick-slurm}}
[ -d "$lab" ] || exit 0
lab=$(cd "$lab" && pwd)
export SLURM_CONF=$lab/etc/slurm.conf
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
pids=()
for f in "$lab"/run/slurmctld.pid "$lab"/run/slurmd-*.pid; do
	[ -f "$f" ] && pids+=("$(cat "$f")")
done
ctld_alive=0
[ -f "$lab/run/slurmctld.pid" ] && alive "$(cat "$lab/run/slurmctld.pid")" && ctld_alive=1
if [ "$ctld_alive" = 1 ]; then
	jobs=$(timeout 3 squeue -h -o %i 2>/dev/null || true)
	[ -n "$jobs" ] && timeout 5 scancel $jobs 2>/dev/null
	for _ in $(seq 1 50); do
		[ -z "$(timeout 3 squeue -h -t R,CG -o %i 2>/dev/null)" ] && break
		sleep 0.2
	done
	timeout 5 scontrol shutdown >/dev/null 2>&1
fi
wait_gone() { # PID... : SIGTERM after 5 s, SIGKILL after 10 s
	for i in $(seq 1 100); do
		local left=0
		for p in "$@"; do alive "$p" && left=1; done
		[ $left = 0 ] && return 0
		if [ "$i" = 50 ]; then for p in "$@"; do alive "$p" && kill -TERM "$p" 2>/dev/null; done; fi
		sleep 0.1
	done
	for p in "$@"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
	return 0
}
[ ${#pids[@]} -gt 0 ] && wait_gone "${pids[@]}"
# slurmstepd and the job's processes survive their slurmd: kill the trees of
# this LAB's stepds (recognised by SLURM_CONF in their environment).
descendants() { ps -eo pid=,ppid= | awk -v r="$1" '{p[$1]=$2} END {for (c in p) {x=c; while (x in p && x != 1) {if (p[x]==r) {print c; break} x=p[x]}}}'; }
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	[ "$(cat "$d/comm" 2>/dev/null)" = slurmstepd ] || continue
	{ tr '\0' '\n' <"$d/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$lab/etc/slurm.conf" || continue
	kill -KILL "$p" $(descendants "$p") 2>/dev/null
done
# slurmdbd and its MariaDB (RK_SLURM_DBD=1): after slurmctld, which reports to them.
for f in "$lab/run/slurmdbd.pid" "$lab/db/run/mariadbd.pid"; do
	[ -f "$f" ] || continue
	p=$(cat "$f")
	alive "$p" && kill -TERM "$p" 2>/dev/null && wait_gone "$p"
done
if [ -f "$lab/munge/munged.pid" ]; then
	m=$(cat "$lab/munge/munged.pid")
	alive "$m" && kill -TERM "$m" 2>/dev/null && wait_gone "$m"
fi
rm -rf "$lab/state" "$lab/spool" "$lab/run" "$lab/dev" "$lab/db"
echo "slurm down: $lab"
