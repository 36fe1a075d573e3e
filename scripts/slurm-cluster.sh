#!/usr/bin/env bash
# A site's own nodes as a rubick cluster file (`rubick sim --cluster FILE`, the
# spec of include/rubick/cluster.h), from Slurm's `scontrol show nodes -o`: one
# group "Nx G:TYPE,cpus=C,mem=M" per kind of node (GPUs, GPU type, CPUTot,
# RealMemory in MiB), nodes in Slurm's order. Nodes without a GPU are left out,
# and said so in a comment; so are untyped GPUs given --gpu-type (default a800,
# rubick's reference type: name the real one, `rubick sim` lists the known types).
# A node with two GPU types is one group per type would misstate it: it is refused.
#   usage: slurm-cluster.sh [--gpu-type TYPE] [FILE|-] > cluster.txt
#          (FILE: saved `scontrol show nodes -o` output; none: run scontrol)
# docs/replay.md has the whole recipe.
set -euo pipefail
gpu_type=a800
while [ $# -gt 0 ]; do
	case $1 in
	--gpu-type)
		[ $# -ge 2 ] || { echo "slurm-cluster.sh: --gpu-type needs a value" >&2; exit 2; }
		gpu_type=$2
		shift 2
		;;
	-h | --help)
		sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	-) break ;;
	-*) echo "slurm-cluster.sh: $1: unknown option (try --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || { echo "slurm-cluster.sh: one input at most (try --help)" >&2; exit 2; }
if [ $# -eq 1 ] && [ "$1" != - ]; then
	[ -r "$1" ] || { echo "slurm-cluster.sh: $1: cannot read" >&2; exit 1; }
	exec <"$1"
	src=$1
elif [ $# -eq 0 ]; then
	command -v scontrol >/dev/null || { echo "slurm-cluster.sh: no scontrol here (give a saved file)" >&2; exit 1; }
	nodes=$(scontrol show nodes -o) || { echo "slurm-cluster.sh: scontrol show nodes -o failed" >&2; exit 1; }
	exec <<<"$nodes"
	src="scontrol show nodes -o"
else
	src=stdin
fi
awk -v deftype="$gpu_type" -v src="$src" '
function bad(msg) { printf "slurm-cluster.sh: %s:%d: %s\n", src, NR, msg > "/dev/stderr"; err = 1; exit 1 }
/^[ \t]*$/ { next }
{
	name = ""; cpus = ""; mem = ""; gres = ""
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		k = kv[1]; v = substr($i, length(k) + 2)
		if (k == "NodeName") name = v
		else if (k == "CPUTot") cpus = v
		else if (k == "RealMemory") mem = v
		else if (k == "Gres") gres = v
	}
	if (name == "") bad("no NodeName= (not scontrol show nodes -o output)")
	if (cpus !~ /^[0-9]+$/) bad(name ": CPUTot '\''" cpus "'\'' is not a count")
	if (mem !~ /^[0-9]+$/) bad(name ": RealMemory '\''" mem "'\'' is not a number of MB")
	gpus = 0; type = ""
	n = split(gres, items, ",")
	for (j = 1; j <= n; j++) {
		g = items[j]; sub(/\(.*$/, "", g)   # gpu:a100:4(S:0-1) -> gpu:a100:4
		m = split(g, p, ":")
		if (p[1] != "gpu") continue
		cnt = p[m]; t = (m >= 3) ? tolower(p[2]) : ""
		if (cnt !~ /^[0-9]+$/) bad(name ": Gres '\''" items[j] "'\'': no GPU count")
		if (gpus > 0 && t != type) bad(name ": two GPU types (" type ", " t "): one group per node type only")
		gpus += cnt; type = t
	}
	if (gpus == 0) { skipped = skipped " " name; next }
	if (type == "") { type = deftype; untyped++ }
	key = gpus ":" type ",cpus=" cpus ",mem=" mem
	if (!(key in count)) order[++kinds] = key
	count[key]++
	total++
}
END {
	if (err) exit 1
	if (total == 0) { print "slurm-cluster.sh: " src ": no node with a GPU" > "/dev/stderr"; exit 1 }
	printf "# from %s: %d GPU node(s) in %d group(s)\n", src, total, kinds
	if (untyped) printf "# %d node(s) name no GPU type: given %s (--gpu-type)\n", untyped, deftype
	if (skipped != "") printf "# left out, no GPU:%s\n", skipped
	for (k = 1; k <= kinds; k++) printf "%dx%s\n", count[order[k]], order[k]
}'
