#!/usr/bin/env bash
# slurm.sh - a real Slurm (Debian's slurm-wlm + munge) on the hosts of a
# test cluster (scripts/cluster.sh), for the Slurm tests (issue 11).  Root.
#
#   scripts/slurm.sh up [N]     start munge, slurmctld and one slurmd per
#                               host (with N: `cluster.sh up N` first);
#                               last line: the slurm.conf
#   scripts/slurm.sh down       cancel every job, stop every daemon by pid
#                               (and the cluster, if `up N` made it)
#   scripts/slurm.sh env        `export` lines (SLURM_CONF, the cluster's)
#   scripts/slurm.sh status     sinfo of the instance; exit 1 if not up
#
# The instance is the cluster's (MD_CLUSTER, default md).  What runs:
#
#   munged      one, on the machine, on a socket of its own in the state
#               dir (AuthInfo=socket=... in slurm.conf); the hosts share the
#               machine's /run, so the slurmd on every host and every client
#               reach the same munged: one key, no copies.
#   slurmctld   one, on the machine (the cluster's "login node"), on the
#               bridge's address A.B.C.1 and a port of the instance's own
#               (16000 + C), so instances never collide.
#   slurmd      one per host, inside the host's namespaces (nsenter into its
#               pid 1), NodeName = the host's name, NodeAddr = its address;
#               its job steps (slurmstepd and the tasks) live in the host.
#
# State: /run/md-slurm/NAME (slurm.conf, munge key and socket, spool and
# state dirs, logs, pids).  Daemons run in the foreground (-D/-F) under
# setsid and are recorded as "PID START" (start time from /proc), so
# `down` stops exactly them (SIGTERM, then SIGKILL), never by name.  A
# slurmstepd left in a host by a slurmd that died is found through the
# host's pid namespace and ended by pid too.  `up` on a healthy instance
# does nothing; on anything else (state left by a crash, a dead daemon) it
# cleans up first.
set -euo pipefail

NAME=${MD_CLUSTER:-md}
ROOT=/run/md-slurm
S=$ROOT/$NAME
CSTATE=/run/md-cluster/$NAME
HERE=$(dirname "$(readlink -f "$0")")
CLUSTER=$HERE/cluster.sh

die() { echo "slurm.sh: $*" >&2; exit 1; }

need() {
	[ "$(id -u)" -eq 0 ] || die "must run as root (it starts daemons inside the namespace hosts): use sudo"
	local b
	for b in munged slurmctld slurmd srun scontrol sinfo; do
		command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] ||
			die "$b missing: install slurm-wlm and munge (scripts/setup.sh does)"
	done
}

lock() {
	mkdir -p $ROOT
	exec 8<$ROOT
	flock 8
}

start_time() {
	local s
	s=$(cat /proc/"$1"/stat 2>/dev/null) || return 0
	s=${s##*) }
	set -- $s
	[ "$1" = Z ] || echo "${20}"
}

same_proc() { [ -n "$1" ] && [ -n "$2" ] && [ "$(start_time "$1")" = "$2" ]; }

now_us() { echo "${EPOCHREALTIME/./}"; }

# Stop "PID:START" words: SIGTERM, up to 5 s, then SIGKILL, up to 5 s.
stop_procs() {
	local sig p end left
	for sig in TERM KILL; do
		for p in "$@"; do
			same_proc "${p%%:*}" "${p#*:}" && kill -"$sig" "${p%%:*}" 2>/dev/null || true
		done
		end=$(($(now_us) + 5000000))
		while [ "$(now_us)" -lt $end ]; do
			left=0
			for p in "$@"; do
				same_proc "${p%%:*}" "${p#*:}" && left=1
			done
			[ $left = 0 ] && return 0
			sleep 0.1
		done
	done
}

# A host's pid 1 (its sshd) from the cluster's state: "PID START".
host_pid1() {
	local pid st x
	read -r pid st x x <"$CSTATE/pids/$1" 2>/dev/null || return 1
	same_proc "$pid" "$st" || return 1
	echo "$pid $st"
}

# Every process in the pid namespace of host pid 1 $1 whose executable is
# $2: found through /proc's exe and ns links (never by name), one pid a
# line.  One `ls` over /proc/*/exe first: a readlink per process of a busy
# machine took 45 s per host.
procs_in_host() {
	local ns p
	ns=$(readlink /proc/"$1"/ns/pid 2>/dev/null) || return 0
	for p in $(ls -l /proc/[0-9]*/exe 2>/dev/null |
		   awk -v exe="$2" '$NF == exe { split($(NF-2), a, "/"); print a[3] }'); do
		[ "$(readlink /proc/"$p"/ns/pid 2>/dev/null)" = "$ns" ] && echo "$p"
	done
	return 0
}

conf() { echo "$S/slurm.conf"; }

slurm_env() { SLURM_CONF=$S/slurm.conf "$@"; }

teardown() {
	local f pid st procs=() h hp
	[ -d "$S" ] || return 0
	# Jobs first: their steps end with them (slurmstepd and the tasks).
	if [ -f "$S/pids/slurmctld" ] && read -r pid st <"$S/pids/slurmctld" &&
	   same_proc "$pid" "$st"; then
		slurm_env timeout 10 scancel --full --quiet \
			$(slurm_env timeout 10 squeue -h -o %i 2>/dev/null) 2>/dev/null || true
		slurm_env timeout 10 scancel --quiet \
			$(slurm_env timeout 10 squeue -h -o %i 2>/dev/null) 2>/dev/null || true
		for f in $(seq 50); do
			[ -z "$(slurm_env timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	# slurmd (and the nsenter above it), then slurmctld, then munged.
	for f in "$S"/pids/slurmd.* "$S"/pids/nsenter.*; do
		[ -f "$f" ] || continue
		read -r pid st <"$f" || continue
		procs+=("$pid:$st")
	done
	[ ${#procs[@]} -eq 0 ] || stop_procs "${procs[@]}"
	# A slurmstepd left behind (slurmd killed under it) is the host's.
	procs=()
	for h in $(cat "$S/hosts" 2>/dev/null); do
		hp=$(host_pid1 "$h") || continue
		for pid in $(procs_in_host "${hp%% *}" /usr/sbin/slurmstepd); do
			procs+=("$pid:$(start_time "$pid")")
		done
	done
	[ ${#procs[@]} -eq 0 ] || stop_procs "${procs[@]}"
	for f in slurmctld munged; do
		[ -f "$S/pids/$f" ] || continue
		read -r pid st <"$S/pids/$f" || continue
		stop_procs "$pid:$st"
	done
	if [ -f "$S/made-cluster" ]; then
		MD_CLUSTER=$NAME "$CLUSTER" down || true
	fi
	rm -rf "$S"
}

write_conf() {
	local net=$1 port=$2 h i=0 nodes
	nodes=$(tr '\n' ',' <"$S/hosts" | sed 's/,$//')
	cat >"$S/slurm.conf" <<EOF
# Made by scripts/slurm.sh for cluster $NAME: do not edit.
ClusterName=md$NAME
SlurmctldHost=$(hostname -s)($net.1)
SlurmctldPort=$port
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups here: processes are tracked through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=120
# Time limits in the tests are short: enforce them within seconds.
OverTimeLimit=0
EOF
	while read -r h; do
		i=$((i + 1))
		echo "NodeName=$h NodeAddr=$net.$((10 + i)) CPUs=$(nproc) State=UNKNOWN" >>"$S/slurm.conf"
	done <"$S/hosts"
	echo "PartitionName=md Nodes=$nodes Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:64" >>"$S/slurm.conf"
	{
		echo "SLURM_CONF=$S/slurm.conf"
		echo "MD_SLURM=$NAME"
		echo "MD_SLURM_STATE=$S"
		echo "MD_SLURM_SCRIPT=$HERE/slurm.sh"
		echo "MD_SLURM_NODES=$nodes"
	} >"$S/env"
}

start_munge() {
	mkdir -p "$S/munge"
	# Clients of any user reach the socket; the key stays root's.
	chmod 755 "$S/munge"
	head -c 1024 /dev/urandom >"$S/munge/munge.key"
	chmod 400 "$S/munge/munge.key"
	setsid /usr/sbin/munged -F --force --socket="$S/munge/munge.socket" \
		--key-file="$S/munge/munge.key" --pid-file="$S/munge/munged.pid" \
		--log-file="$S/log/munged.log" --seed-file="$S/munge/seed" \
		</dev/null >>"$S/log/munged.out" 2>&1 8<&- &
	echo "$! $(start_time $!)" >"$S/pids/munged"
	for i in $(seq 100); do
		[ -S "$S/munge/munge.socket" ] && return 0
		sleep 0.05
	done
	die "munged did not start (see $S/log/munged.log)"
}

start_ctld() {
	setsid /usr/sbin/slurmctld -D -f "$S/slurm.conf" \
		</dev/null >>"$S/log/slurmctld.out" 2>&1 8<&- &
	echo "$! $(start_time $!)" >"$S/pids/slurmctld"
}

start_slurmd() {
	local h=$1 hp np c i
	hp=$(host_pid1 "$h") || die "host $h of cluster $NAME is down: scripts/cluster.sh up N"
	mkdir -p "$S/spool/$h"
	# `ip netns exec` (cluster.sh) mounted a sysfs of the host's own, so
	# the host has no cgroup mounts, and Debian's slurmd 22.05 will not
	# start without its cgroup plugin (even with proctrack/linuxproc and
	# task/none, which create no cgroup): it wants a tmpfs on
	# /sys/fs/cgroup and a cgroup file system on /sys/fs/cgroup/systemd.
	# Both go into the host's mount namespace only: a tmpfs, and a named
	# cgroup v1 hierarchy of our own (name=md-slurm, no controller), not
	# the machine's systemd one; nothing is created in it.
	setsid nsenter -t "${hp%% *}" -m -u -n -p -- /bin/sh -c '
		mountpoint -q /sys/fs/cgroup ||
			mount -t tmpfs -o mode=755 md-cgroup /sys/fs/cgroup || exit 1
		mkdir -p /sys/fs/cgroup/systemd || exit 1
		mountpoint -q /sys/fs/cgroup/systemd ||
			mount -t cgroup -o none,name=md-slurm md-slurm /sys/fs/cgroup/systemd || exit 1
		exec /usr/sbin/slurmd -D -f "$1" -N "$2"' sh "$S/slurm.conf" "$h" \
		</dev/null >>"$S/log/slurmd-$h.out" 2>&1 8<&- &
	np=$!
	echo "$np $(start_time $np)" >"$S/pids/nsenter.$h"
	for i in $(seq 100); do
		c=$(pgrep -P "$np" 2>/dev/null | head -1) || true
		[ -n "$c" ] && break
		sleep 0.05
	done
	[ -n "$c" ] || die "slurmd on $h did not start (see $S/log/slurmd-$h.out)"
	echo "$c $(start_time "$c")" >"$S/pids/slurmd.$h"
}

healthy() {
	local f pid st
	[ -f "$S/slurm.conf" ] || return 1
	[ -f "$S/pids/munged" ] && [ -f "$S/pids/slurmctld" ] || return 1
	for f in "$S"/pids/*; do
		read -r pid st <"$f" || return 1
		same_proc "$pid" "$st" || return 1
	done
	[ "$(ls "$S"/pids/slurmd.* | wc -l)" = "$(wc -l <"$S/hosts")" ] || return 1
	nodes_idle 1
}

# Every node up (idle, mixed or allocated) within $1 s?
nodes_idle() {
	local t out
	for t in $(seq $(($1 * 5))); do
		out=$(slurm_env timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null) || out=
		if [ -n "$out" ] && ! echo "$out" | grep -qvE ' (idle|mixed|allocated)$'; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# Instances whose cluster is gone (a test run killed with SIGKILL: the
# next cluster.sh up removed its hosts, and with them the slurmd): their
# munged and slurmctld are stopped by pid, their state removed.
reap_orphans() {
	local d
	for d in $ROOT/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		[ -d "/run/md-cluster/${d##*/}" ] && continue
		echo "slurm.sh: removing Slurm of cluster ${d##*/}: the cluster is gone" >&2
		(S=$d; rm -f "$S/made-cluster"; teardown)
	done
}

cmd_up() {
	local n=${1:-} net port h made=0
	need
	if [ -n "$n" ]; then
		[ -f "$CSTATE/n" ] && [ "$(cat "$CSTATE/n")" = "$n" ] || made=1
		MD_CLUSTER=$NAME "$CLUSTER" up "$n" >/dev/null
	fi
	[ -f "$CSTATE/hostfile" ] || die "cluster $NAME is not up: scripts/cluster.sh up N (or scripts/slurm.sh up N)"
	lock
	reap_orphans
	if healthy; then
		echo "slurm.sh: Slurm on cluster $NAME already up" >&2
		echo "$S/slurm.conf"
		return 0
	fi
	[ -f "$S/made-cluster" ] && made=1
	rm -f "$S/made-cluster"
	teardown
	# Any failure from here on (die, a command failing) leaves nothing.
	trap '[ -n "${MD_SLURM_KEEP:-}" ] || teardown' EXIT
	mkdir -p "$S"/{pids,log,ctld,spool,run}
	chmod 755 "$S"
	[ $made = 1 ] && touch "$S/made-cluster"
	cp "$CSTATE/hostfile" "$S/hosts"
	net=$(cat "$CSTATE/subnet")
	port=$((16000 + ${net##*.}))
	write_conf "$net" "$port"
	start_munge
	start_ctld
	for h in $(cat "$S/hosts"); do
		start_slurmd "$h"
	done
	nodes_idle 20 || die "not every node came up in 30 s: $(slurm_env sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ';') (logs: $S/log)"
	trap - EXIT
	echo "slurm.sh: Slurm up on cluster $NAME: nodes $(tr '\n' ' ' <"$S/hosts")controller $net.1:$port" >&2
	echo "$S/slurm.conf"
}

cmd_down() {
	need
	lock
	teardown
	rmdir $ROOT 2>/dev/null || true
}

cmd_env() {
	[ -f "$S/env" ] || die "Slurm on cluster $NAME is not up: scripts/slurm.sh up N"
	local k v
	MD_CLUSTER=$NAME "$CLUSTER" env
	while IFS='=' read -r k v; do
		printf "export %s='%s'\n" "$k" "$v"
	done <"$S/env"
}

cmd_status() {
	[ -f "$S/slurm.conf" ] || { echo "Slurm on cluster $NAME: down"; return 1; }
	healthy || { echo "Slurm on cluster $NAME: not healthy"; slurm_env sinfo -N 2>&1 || true; return 1; }
	slurm_env sinfo -N
}

case ${1:-} in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
env) cmd_env ;;
status) cmd_status ;;
*) die "usage: scripts/slurm.sh up [N] | down | env | status" ;;
esac
