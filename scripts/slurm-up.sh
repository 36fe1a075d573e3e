#!/usr/bin/env bash
# Start an emulated Slurm 22.05 cluster on this machine: NODES nodes x GPUS fake
# GPUs, every daemon, file and socket under one private folder LAB (default
# /tmp/rubick-slurm). Recipe and the reasons for every setting:
# docs/slurm.md, "Slurm 22.05 facts", Emulation. Needs root (munged, mknod, SlurmUser=root).
#   usage: scripts/slurm-up.sh [LAB [NODES [GPUS]]]
#   then:  export SLURM_CONF=LAB/etc/slurm.conf
# With RK_SLURM_DBD=1 (and mariadb-server, slurmdbd installed) it also starts a
# private MariaDB and slurmdbd, so that sacct works (docs/slurm.md, "accounting").
# Stop it with scripts/slurm-down.sh LAB (by PID; never by process name).
set -euo pipefail
lab=${1:-${RK_SLURM_LAB:-/tmp/rubick-slurm}}
nodes=${2:-4}
gpus=${3:-8}
port=${RK_SLURM_PORT:-16817}
case $nodes$gpus in *[!0-9]*) echo "slurm-up.sh: NODES and GPUS must be numbers" >&2; exit 2;; esac
for b in munged mungekey slurmctld slurmd sinfo; do
	command -v "$b" >/dev/null || { echo "slurm-up.sh: $b not found (scripts/install-deps.sh --slurm)" >&2; exit 3; }
done
[ "$(id -u)" -eq 0 ] || { echo "slurm-up.sh: must run as root (munged, mknod)" >&2; exit 3; }
mkdir -p "$lab"
chmod 755 "$lab" # munged wants execute permission for all on every folder above its socket
lab=$(cd "$lab" && pwd)
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
# Starting twice would reuse the old controller and orphan the old munged (§7).
for f in "$lab"/run/*.pid "$lab"/munge/munged.pid "$lab"/db/run/mariadbd.pid; do
	[ -f "$f" ] || continue
	p=$(cat "$f")
	if alive "$p"; then echo "slurm-up.sh: $f: PID $p is alive; run slurm-down.sh $lab first" >&2; exit 1; fi
done
case $port in '' | *[!0-9]*) echo "slurm-up.sh: RK_SLURM_PORT=$port: not a port number" >&2; exit 2;; esac
# Every port the lab binds, checked before anything starts: a daemon that finds its port
# taken dies with "Address already in use" in a log, which never names the variable to change.
taken=$(python3 - "$port" "$nodes" <<'PY'
import socket, sys
base, nodes = int(sys.argv[1]), int(sys.argv[2])
ports = [base, base + 1, base + 2, base + 3] + [base + 100 + i for i in range(nodes)]
for p in ports:
    s = socket.socket()
    # as the daemons bind: a port left in TIME_WAIT by the last lab is free to them
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("0.0.0.0", p))
    except OSError:
        print(p)
    finally:
        s.close()
PY
)
if [ -n "$taken" ]; then
	echo "slurm-up.sh: port(s) $(echo $taken | tr ' ' ',') already in use; the lab uses RK_SLURM_PORT=$port," \
		"+1..+3 and +100..+$((99 + nodes)): pick a free base, e.g. RK_SLURM_PORT=$((port + 1000)) scripts/slurm-up.sh" >&2
	exit 1
fi
dbd=${RK_SLURM_DBD:-0}
if [ "$dbd" = 1 ]; then
	for b in mariadbd mariadb-install-db mariadb slurmdbd sacct; do
		command -v "$b" >/dev/null || { echo "slurm-up.sh: RK_SLURM_DBD=1 but $b is not installed (scripts/install-deps.sh)" >&2; exit 3; }
	done
fi
rm -rf "$lab/state" "$lab/spool" "$lab/run" "$lab/dev" "$lab/log" "$lab/etc" "$lab/munge" "$lab/db"
mkdir -p "$lab"/{state,spool,run,log,etc,munge}
chmod 755 "$lab/munge" # 700 fails: munged wants execute permission for all on the socket folder
mungekey --create --keyfile="$lab/munge/munge.key" >/dev/null 2>&1
chmod 600 "$lab/munge/munge.key"
munged --key-file="$lab/munge/munge.key" --socket="$lab/munge/munge.socket.2" \
	--pid-file="$lab/munge/munged.pid" --log-file="$lab/munge/munged.log" \
	--seed-file="$lab/munge/munged.seed"
# Fake GPUs: 22.05 drops file-less GPUs, and regular files are rejected (§2).
gres=$lab/etc/gres.conf
echo "AutoDetect=off" >"$gres"
last=$((gpus - 1))
for n in $(seq 1 "$nodes"); do
	mkdir -p "$lab/dev/n$n"
	for g in $(seq 0 "$last"); do
		mknod "$lab/dev/n$n/nvidia$g" c 195 "$g" 2>/dev/null || ln -sf /dev/null "$lab/dev/n$n/nvidia$g"
	done
	echo "NodeName=n$n Name=gpu File=$lab/dev/n$n/nvidia[0-$last]" >>"$gres"
done
host=$(hostname -s)
# Accounting: either slurmdbd on a private MariaDB (sacct, sacctmgr) or only a
# text log of every job end (no database needed).
acct="AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$lab/log/jobcomp.txt"
if [ "$dbd" = 1 ]; then
	mkdir -p "$lab/db/data" "$lab/db/run"
	chown -R mysql:mysql "$lab/db"
	mariadb-install-db --user=mysql --datadir="$lab/db/data" --auth-root-authentication-method=socket \
		--skip-test-db >"$lab/log/mariadb-install.log" 2>&1
	# Its own port and socket, small buffers: one private server per lab.
	setsid mariadbd --user=mysql --datadir="$lab/db/data" --socket="$lab/db/run/mysqld.sock" \
		--pid-file="$lab/db/run/mariadbd.pid" --bind-address=127.0.0.1 --port=$((port + 3)) \
		--log-error="$lab/db/mariadbd.log" --innodb-buffer-pool-size=16M \
		--innodb-log-file-size=8M >/dev/null 2>&1 </dev/null &
	mdb=$!
	for _ in $(seq 1 150); do
		mariadb -S "$lab/db/run/mysqld.sock" -e "select 1" >/dev/null 2>&1 && break
		alive "$mdb" || break
		sleep 0.2
	done
	dbpass=$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')
	mariadb -S "$lab/db/run/mysqld.sock" -e "create user 'slurm'@'127.0.0.1' identified by '$dbpass';
		grant all on slurm_acct_db.* to 'slurm'@'127.0.0.1';" || { echo "slurm-up.sh: MariaDB did not start: $(tail -3 "$lab/db/mariadbd.log")" >&2; exit 1; }
	(umask 077; cat >"$lab/etc/slurmdbd.conf" <<DBD
AuthType=auth/munge
AuthInfo=socket=$lab/munge/munge.socket.2
DbdHost=$host
DbdAddr=127.0.0.1
DbdPort=$((port + 2))
SlurmUser=root
PidFile=$lab/run/slurmdbd.pid
LogFile=$lab/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((port + 3))
StorageUser=slurm
StoragePass=$dbpass
StorageLoc=slurm_acct_db
DBD
	)
	acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((port + 2))
AccountingStoragePass=$lab/munge/munge.socket.2
AccountingStoreFlags=job_comment
AccountingStorageTRES=gres/gpu
JobCompType=jobcomp/filetxt
JobCompLoc=$lab/log/jobcomp.txt"
fi
cat >"$lab/etc/job_submit.lua" <<'LUA'
-- Every new job is held: rubickd places and releases it (docs/slurm.md, "Slurm 22.05 facts").
function slurm_job_submit(job_desc, part_list, submit_uid) job_desc.priority = 0; return slurm.SUCCESS end
-- The hold of a user's own sbatch job is a user hold, which its owner could lift
-- (scontrol release) and so start a job where rubick does not look (issue 13): only
-- root (SlurmUser, rubickd) may release, hold or reprioritise a job.
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if modify_uid ~= 0 and job_desc.priority ~= nil and job_desc.priority ~= slurm.NO_VAL then
		slurm.log_user("rubick schedules this cluster: only rubickd (root) releases, holds or reprioritises jobs")
		return slurm.ERROR
	end
	return slurm.SUCCESS
end
return slurm.SUCCESS
LUA
cat >"$lab/etc/slurm.conf" <<CONF
ClusterName=rubick
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$lab/munge/munge.socket.2
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$lab/state
SlurmdSpoolDir=$lab/spool/%n
SlurmctldPidFile=$lab/run/slurmctld.pid
SlurmdPidFile=$lab/run/slurmd-%n.pid
SlurmctldLogFile=$lab/log/slurmctld.log
SlurmdLogFile=$lab/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$acct
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
JobSubmitPlugins=lua
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=n[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((port + 100))-$((port + 99 + nodes))] CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=64000 Gres=gpu:$gpus State=UNKNOWN
PartitionName=gpu Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
# A second partition on the same nodes, scheduled first (a job's own slurm_partition; an
# outside job that must win a node in tests/slurm/test_faults.py)
PartitionName=long Nodes=n[1-$nodes] Default=NO MaxTime=INFINITE State=UP OverSubscribe=NO PriorityTier=2
CONF
export SLURM_CONF=$lab/etc/slurm.conf
if [ "$dbd" = 1 ]; then
	setsid slurmdbd -D >"$lab/log/slurmdbd.out" 2>&1 </dev/null &
	for _ in $(seq 1 50); do
		timeout 3 sacctmgr -n list cluster >/dev/null 2>&1 && break
		sleep 0.2
	done
	timeout 10 sacctmgr -i add cluster rubick >/dev/null 2>&1 || true
fi
setsid slurmctld -D -i >"$lab/log/slurmctld.out" 2>&1 </dev/null &
ctld=$!
for n in $(seq 1 "$nodes"); do
	setsid slurmd -D -N "n$n" >"$lab/log/slurmd-n$n.out" 2>&1 </dev/null &
done
# Poll, never a fixed sleep: start-up took 0.6-2.4 s in docs/slurm.md, "Slurm 22.05 facts".
for _ in $(seq 1 300); do
	# a controller that died (port taken) must not let sinfo answer from another cluster
	if ! alive "$ctld"; then
		echo "slurm-up.sh: slurmctld exited: $(tail -2 "$lab/log/slurmctld.log" 2>/dev/null)" >&2
		exit 1
	fi
	up=$(timeout 3 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l || true)
	[ "$up" -eq "$nodes" ] && { echo "slurm up: $nodes nodes x $gpus GPUs, SLURM_CONF=$SLURM_CONF"; exit 0; }
	sleep 0.2
done
echo "slurm-up.sh: nodes not idle after 60 s; logs in $lab/log" >&2
exit 1
