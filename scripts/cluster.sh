#!/usr/bin/env bash
# cluster.sh - a test cluster of N hosts on this one machine, for jobs that
# span hosts (issue 10).  Root only.
#
#   scripts/cluster.sh up N        bring up N hosts; last line: the hostfile
#   scripts/cluster.sh down        remove everything `up` made
#   scripts/cluster.sh exec HOST CMD...   run CMD inside HOST's namespaces
#   scripts/cluster.sh env         `export` lines for a shell or a test
#   scripts/cluster.sh status      one line per host; exit 1 if not up
#
# Environment:
#   MD_CLUSTER         instance name, [a-z0-9]{1,8} (default md).  It picks
#                      every name below, the state dir and the subnet, so
#                      instances never collide (tests and people in parallel).
#   MD_CLUSTER_PREFIX  host name prefix (default node: node1..nodeN).
#   MD_CLUSTER_OWNER   a pid (e.g. a test run's shell): the instance lives
#                      only as long as it does; any later `up` removes an
#                      instance whose owner is gone (a run killed with
#                      SIGKILL cannot run its own `down`).
#   MD_CLUSTER_SHARE   folders under /tmp, separated by ':', that every
#                      host sees at the same path although its /tmp is
#                      its own (a build tree under /tmp: the samples and
#                      the agent must run on the hosts).
#   MD_CLUSTER_NET     the /24 to use, as A.B.C (default: the first free
#                      10.213.C with C in 1..254, see "Addresses").
#
# What one host is: a network namespace `mdc-NAME-HOST` (named, under
# /var/run/netns) whose eth0 is a veth `mdc-NAME.I` on the bridge `mdc-NAME`,
# plus a UTS namespace (its own hostname), a PID namespace and a mount
# namespace (its own /proc, and tmpfs on /tmp and /dev/shm, so session
# directories and shared-memory files of two hosts never meet).  Its pid 1
# is its own sshd (`ps` inside shows sshd as pid 1); ending that pid ends
# every process of the host, which is what `down` does.
#
# Addresses: the bridge holds A.B.C.1/24 on the machine's side, host I holds
# A.B.C.(10+I)/24.  The hosts have no default route, only the subnet, and
# the subnet exists only on the bridge: nothing they send can leave for an
# address outside loopback and the subnet.  A subnet already routed on this
# machine (any route but the default one) or held by another instance is
# never chosen.
#
# Names: three ways, all removed by `down`.  (1) The ssh config (state dir,
# `ssh -F CONFIG`) has one HostName entry per host, usable from the
# machine's own namespace and from inside the hosts (the state dir is
# visible in both); it refuses any other host name, so no ssh with it can
# reach another address.  (2) Inside each host, an /etc/hosts bind-mounted
# in its mount namespace names the cluster's hosts only.  (3) The machine's
# /etc/hosts gets one line per host, tagged "# md-cluster:NAME": mpirun
# resolves every hostfile name itself (getaddrinfo), and a name missing
# from /etc/hosts became a DNS query to the machine's resolver (seen with
# strace: 12 queries for node1..3 per mpirun), traffic leaving the
# machine.  Two instances with the same prefix both list node1: /etc/hosts
# gives the first one's address (what mpirun does with it does not depend
# on it; ssh always goes by the instance's own config); MD_CLUSTER_PREFIX
# gives an instance names of its own.
#
# Login: root, with a key made for the instance; the hosts share one host
# key, listed for every name and address in the config's known_hosts
# file: StrictHostKeyChecking yes, BatchMode, no prompts ever.
#
# State: /run/md-cluster/NAME (keys, configs, hostfile, pids).  All
# instances take one lock (flock on /run/md-cluster) for up and down.
# `up N` on a healthy cluster of N hosts does nothing but print the hostfile
# again; on anything else (other N, dead sshd, state left by a crash, or
# kernel objects of NAME without state) it cleans up first.  Daemons are
# stopped by pid, checked against their start time.
set -euo pipefail

ROOT=/run/md-cluster
NAME=${MD_CLUSTER:-md}
PREFIX=${MD_CLUSTER_PREFIX:-node}
STATE=$ROOT/$NAME
BR=mdc-$NAME
SSHD=/usr/sbin/sshd
SELF=$(readlink -f "$0")

die() { echo "cluster.sh: $*" >&2; exit 1; }

check_names() {
	[[ $NAME =~ ^[a-z0-9]{1,8}$ ]] ||
		die "MD_CLUSTER='$NAME' is not a valid instance name: use 1 to 8 of a-z 0-9"
	[[ $PREFIX =~ ^[a-z][a-z0-9]{0,30}$ ]] ||
		die "MD_CLUSTER_PREFIX='$PREFIX' is not a valid host prefix: a letter, then a-z 0-9"
}

need_root() {
	[ "$(id -u)" -eq 0 ] || die "must run as root (it creates namespaces and a bridge): use sudo"
	[ -x $SSHD ] || die "$SSHD missing: install openssh-server (scripts/setup.sh does)"
}

# One lock for all instances: subnets and /run/sshd are shared.
lock() {
	local i
	for i in 1 2 3 4 5; do
		mkdir -p $ROOT && exec 9<$ROOT && break
		sleep 0.1
	done
	flock 9
}

# Field 22 of /proc/PID/stat (start time); empty if gone or a zombie (this
# machine's pid 1 may leave orphans unreaped for minutes).
start_time() {
	local s
	s=$(cat /proc/"$1"/stat 2>/dev/null) || return 0
	s=${s##*) }
	set -- $s
	[ "$1" = Z ] || echo "${20}"
}

# pid alive and still the process we started (same start time)?
same_proc() { [ -n "$1" ] && [ -n "$2" ] && [ "$(start_time "$1")" = "$2" ]; }

# Microseconds since the epoch.
now_us() { echo "${EPOCHREALTIME/./}"; }

# Are all of the "PID:START" words gone?
all_gone() {
	local p
	for p in "$@"; do
		same_proc "${p%%:*}" "${p#*:}" && return 1
	done
	return 0
}

# Stop processes given as "PID:START" words (only a pid with its recorded
# start time is signalled): SIGTERM, up to 2 s, then SIGKILL, up to 5 s.
# With SIG=KILL in the environment, SIGKILL at once (unshare ignores
# SIGTERM while it waits for its child).
stop_procs() {
	local sig p end wait
	for sig in ${SIG:-TERM} KILL; do
		wait=5
		[ "$sig" = TERM ] && wait=2
		for p in "$@"; do
			same_proc "${p%%:*}" "${p#*:}" && kill -"$sig" "${p%%:*}" 2>/dev/null || true
		done
		end=$(( $(now_us) + wait * 1000000 ))
		while [ "$(now_us)" -lt $end ]; do
			all_gone "$@" && return 0
			sleep 0.05
		done
	done
	all_gone "$@" || echo "cluster.sh: some of pids ${*%%:*} did not exit after SIGKILL" >&2
}

host_name() { echo "$PREFIX$1"; }

# Everything of instance NAME, with or without a state dir.
teardown() {
	local f pid st upid ust ns l procs=() ups=()
	# Each host's pid 1 first: its whole pid namespace ends with it, and
	# its unshare with it; an unshare left is killed (so is its child).
	if [ -d "$STATE/pids" ]; then
		for f in "$STATE"/pids/*; do
			[ -f "$f" ] || continue
			read -r pid st upid ust <"$f" || true
			procs+=("$pid:$st")
			ups+=("$upid:$ust")
		done
	fi
	[ ${#procs[@]} -eq 0 ] || stop_procs "${procs[@]}"
	[ ${#ups[@]} -eq 0 ] || SIG=KILL stop_procs "${ups[@]}"
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		case $ns in mdc-"$NAME"-*) ;; *) continue ;; esac
		# Whatever still runs in a host's network namespace (a crash
		# before its pid was written down) is ours: ended by pid.
		procs=()
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			procs+=("$pid:$(start_time "$pid")")
		done
		[ ${#procs[@]} -eq 0 ] || SIG=KILL stop_procs "${procs[@]}"
		ip netns del "$ns" 2>/dev/null || true
	done
	for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
		case $l in "$BR" | "$BR".*) ip link del "$l" 2>/dev/null || true ;; esac
	done
	etc_hosts_remove
	rm -rf "$STATE"
	# /run/sshd: sshd's privilege separation dir, made by us if it was
	# missing; removed with the last instance.
	if [ -f $ROOT/.made-run-sshd ] && ! ls -d $ROOT/*/ >/dev/null 2>&1; then
		rmdir /run/sshd 2>/dev/null || true
		rm -f $ROOT/.made-run-sshd
	fi
}

# /etc/hosts is rewritten in place (it may be a bind mount), under the lock.
etc_hosts_remove() {
	local rest
	grep -q "# md-cluster:$NAME\$" /etc/hosts 2>/dev/null || return 0
	rest=$(grep -v "# md-cluster:$NAME\$" /etc/hosts)
	printf '%s\n' "$rest" >/etc/hosts
}

etc_hosts_add() {
	local n=$1 net=$2 i
	[ -z "$(tail -c 1 /etc/hosts)" ] || echo >>/etc/hosts
	for i in $(seq "$n"); do
		printf '%s\t%s\t# md-cluster:%s\n' "$net.$((10 + i))" "$(host_name "$i")" "$NAME"
	done >>/etc/hosts
}

# The first free A.B.C: not held by another instance, not routed here.
pick_subnet() {
	local c net
	if [ -n "${MD_CLUSTER_NET:-}" ]; then
		[[ $MD_CLUSTER_NET =~ ^(10\.[0-9]{1,3}|172\.(1[6-9]|2[0-9]|3[01])|192\.168)\.[0-9]{1,3}$ ]] ||
			die "MD_CLUSTER_NET='$MD_CLUSTER_NET' is not A.B.C of a private /24 (10.x.y, 172.16-31.y, 192.168.y)"
		subnet_free "$MD_CLUSTER_NET" ||
			die "subnet $MD_CLUSTER_NET.0/24 is in use here (a route or another instance): unset MD_CLUSTER_NET or pick another"
		echo "$MD_CLUSTER_NET"
		return
	fi
	for c in $(seq 1 254); do
		net=10.213.$c
		subnet_free "$net" && { echo "$net"; return; }
	done
	die "no free subnet in 10.213.1-254.0/24: run 'down' for old instances (ls $ROOT)"
}

subnet_free() {
	local net=$1 f
	for f in $ROOT/*/subnet; do
		[ -f "$f" ] && [ "$(cat "$f")" = "$net" ] && return 1
	done
	[ -z "$(ip -4 route show to match "$net.1" | grep -v '^default')" ]
}

write_configs() {
	local n=$1 net=$2 i h ip names=() hostkey
	ssh-keygen -q -t ed25519 -N '' -C "md-cluster-$NAME" -f "$STATE/id_ed25519"
	ssh-keygen -q -t ed25519 -N '' -C "md-cluster-$NAME-host" -f "$STATE/ssh_host_ed25519_key"
	cp "$STATE/id_ed25519.pub" "$STATE/authorized_keys"
	hostkey=$(cut -d' ' -f1,2 "$STATE/ssh_host_ed25519_key.pub")
	printf '127.0.0.1\tlocalhost\n%s.1\tmdc-%s-front\n' "$net" "$NAME" >"$STATE/hosts"
	: >"$STATE/hostfile"
	: >"$STATE/ssh_config"
	for i in $(seq "$n"); do
		h=$(host_name "$i")
		ip=$net.$((10 + i))
		names+=("$h" "$ip")
		printf '%s\t%s\n' "$ip" "$h" >>"$STATE/hosts"
		echo "$h" >>"$STATE/hostfile"
		printf 'Host %s %s\n\tHostName %s\n' "$h" "$ip" "$ip" >>"$STATE/ssh_config"
	done
	echo "$(IFS=,; echo "${names[*]}") $hostkey" >"$STATE/known_hosts"
	cat >"$STATE/refuse" <<EOF
#!/bin/sh
echo "cluster.sh: ssh to '\$1' refused: not a host of cluster $NAME (${names[*]})" >&2
exit 255
EOF
	chmod 755 "$STATE/refuse"
	cat >>"$STATE/ssh_config" <<EOF
Host * !$(IFS=' '; echo "${names[*]}" | sed 's/ / !/g')
	ProxyCommand $STATE/refuse %h
Host *
	User root
	IdentityFile $STATE/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $STATE/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	CheckHostIP no
	BatchMode yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	ConnectTimeout 5
	ServerAliveInterval 5
	ServerAliveCountMax 3
	LogLevel ERROR
EOF
	cat >"$STATE/sshd_config" <<EOF
Port 22
AddressFamily inet
HostKey $STATE/ssh_host_ed25519_key
PidFile none
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile $STATE/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowAgentForwarding no
AllowTcpForwarding no
MaxStartups 200
MaxSessions 200
LogLevel ERROR
# bash skips ~/.bashrc for an ssh command when SHLVL says it is not the
# first shell: a host logs in like a clean node, not with the machine's
# interactive setup (here root's .bashrc runs pyenv: +1 s per login).
SetEnv SHLVL=1
EOF
	{
		echo "MD_CLUSTER=$NAME"
		echo "MD_CLUSTER_STATE=$STATE"
		echo "MD_CLUSTER_HOSTFILE=$STATE/hostfile"
		echo "MD_CLUSTER_HOSTS=$(cat "$STATE/hostfile" | tr '\n' ' ' | sed 's/ $//')"
		echo "MD_CLUSTER_SUBNET=$net.0/24"
		echo "MD_CLUSTER_SSH=ssh -F $STATE/ssh_config"
		echo "MD_CLUSTER_SCRIPT=$SELF"
		echo "OMPI_MCA_plm_rsh_agent=ssh -F $STATE/ssh_config"
		echo "OMPI_MCA_oob_tcp_if_include=$net.0/24"
		echo "OMPI_MCA_btl_tcp_if_include=$net.0/24"
		# One-sided windows across hosts: Open MPI 4.1's osc/rdma needs
		# an RDMA network and fails MPI_Win_create on TCP (MPI_ERR_WIN);
		# osc/pt2pt runs over the pml.
		echo "OMPI_MCA_osc=pt2pt"
		echo "OMPI_ALLOW_RUN_AS_ROOT=1"
		echo "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
	} >"$STATE/env"
	echo "$n" >"$STATE/n"
	echo "$PREFIX" >"$STATE/prefix"
}

# Bridge, one netns + veth per host.
make_network() {
	local n=$1 net=$2 i h ns
	ip link add "$BR" type bridge
	sysctl -qw net.ipv6.conf."$BR".disable_ipv6=1 2>/dev/null || true
	ip addr add "$net.1/24" dev "$BR"
	ip link set "$BR" up
	for i in $(seq "$n"); do
		h=$(host_name "$i")
		ns=mdc-$NAME-$h
		ip netns add "$ns"
		ip link add "$BR.$i" type veth peer name eth0 netns "$ns"
		sysctl -qw net.ipv6.conf."$BR.$i".disable_ipv6=1 2>/dev/null || true
		ip link set "$BR.$i" master "$BR" up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
		ip -n "$ns" addr add "$net.$((10 + i))/24" dev eth0
		ip -n "$ns" link set lo up
		ip -n "$ns" link set eth0 up
	done
}

# The host's pid 1 is unshare's only child.
child_of() {
	local i c
	for i in $(seq 50); do
		c=$(pgrep -P "$1" 2>/dev/null | head -1) || true
		[ -n "$c" ] && { echo "$c"; return 0; }
		sleep 0.05
	done
	return 1
}

# Start host i's pid 1 (sshd, after its hostname and mounts), in the
# background; unshare's pid is recorded at once.
start_host() {
	local i=$1 h ns upid
	h=$(host_name "$i")
	ns=mdc-$NAME-$h
	# Its own session: a Ctrl-C meant for the caller does not reach it.
	# --kill-child: if unshare is killed, so is the host's pid 1, and
	# with it every process of the host.
	setsid ip netns exec "$ns" unshare --uts --pid --fork --mount-proc \
		--propagation private --kill-child /bin/sh -c '
		hostname "$1" &&
		hold=$2/hold-$1 && mkdir -p "$hold" &&
		mount --bind /tmp "$hold" &&
		mount -t tmpfs -o mode=1777 md-tmp /tmp &&
		mount -t tmpfs -o mode=1777 md-shm /dev/shm &&
		for d in $(echo "$4" | tr : " "); do
			case $d in /tmp/?*) ;; *) continue ;; esac
			mkdir -p "$d" &&
			mount --bind "$hold/${d#/tmp/}" "$d" || exit 1
		done &&
		umount "$hold" &&
		mount --bind "$2/hosts" /etc/hosts &&
		exec "$3" -D -e -f "$2/sshd_config"' sh "$h" "$STATE" "$SSHD" \
		"${MD_CLUSTER_SHARE:-}" \
		</dev/null >>"$STATE/$h.log" 2>&1 9<&- &
	upid=$!
	echo "0 0 $upid $(start_time "$upid")" >"$STATE/pids/$h"
}

# Record host i's pid 1: unshare's only child.
find_host_pid1() {
	local h pid upid ust x
	h=$(host_name "$1")
	read -r x x upid ust <"$STATE/pids/$h"
	pid=$(child_of "$upid") || die "host $h: its pid 1 did not start (see $STATE/$h.log)"
	echo "$pid $(start_time "$pid") $upid $ust" >"$STATE/pids/$h"
}

# Does host $1 let root in and answer with its name, within $2 tries?
probe() {
	local h=$1 t out=
	for t in $(seq "$2"); do
		out=$(ssh -F "$STATE/ssh_config" "$h" hostname 2>/dev/null) && break
		sleep 0.1
	done
	[ "$out" = "$h" ] && return 0
	echo "cluster.sh: host $h: ssh did not answer with its name (got '$out'; log: $STATE/$h.log)" >&2
	return 1
}

# Probe every host at once (a login costs ~0.5 s here).
probe_all() {
	local n=$1 tries=$2 i pids=() rc=0
	for i in $(seq "$n"); do
		probe "$(host_name "$i")" "$tries" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return $rc
}

healthy() {
	local n=$1 i h pid st upid ust
	[ -f "$STATE/n" ] && [ "$(cat "$STATE/n")" = "$n" ] || return 1
	[ "$(cat "$STATE/prefix" 2>/dev/null)" = "$PREFIX" ] || return 1
	ip link show "$BR" >/dev/null 2>&1 || return 1
	for i in $(seq "$n"); do
		h=$(host_name "$i")
		[ -f "$STATE/pids/$h" ] || return 1
		read -r pid st upid ust <"$STATE/pids/$h" || return 1
		same_proc "$pid" "$st" || return 1
		ip netns list | grep -q "^mdc-$NAME-$h\b" || return 1
	done
	probe_all "$n" 1 2>/dev/null
}

# Remove instances whose owner (MD_CLUSTER_OWNER at their up) is gone.
reap_orphans() {
	local d o os
	for d in $ROOT/*/; do
		[ -f "$d/owner" ] || continue
		read -r o os <"$d/owner" || continue
		same_proc "$o" "$os" && continue
		d=${d%/}
		echo "cluster.sh: removing cluster ${d##*/}: its owner, pid $o, is gone" >&2
		(NAME=${d##*/}; STATE=$ROOT/$NAME; BR=mdc-$NAME; teardown)
	done
}

cmd_up() {
	local n=${1:-} net i
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 99 ] ||
		die "up needs a host count 1..99: scripts/cluster.sh up 3"
	need_root
	lock
	reap_orphans
	if healthy "$n"; then
		echo "cluster.sh: cluster $NAME already up with $n hosts" >&2
		echo "$STATE/hostfile"
		return 0
	fi
	teardown
	trap 'teardown' ERR
	if [ ! -d /run/sshd ]; then
		mkdir -m 755 /run/sshd
		touch $ROOT/.made-run-sshd
	fi
	net=$(pick_subnet)
	mkdir -p "$STATE/pids"
	chmod 700 "$STATE" "$STATE/pids"
	echo "$net" >"$STATE/subnet"
	if [ -n "${MD_CLUSTER_OWNER:-}" ]; then
		[ -n "$(start_time "$MD_CLUSTER_OWNER")" ] ||
			die "MD_CLUSTER_OWNER=$MD_CLUSTER_OWNER is no running process"
		echo "$MD_CLUSTER_OWNER $(start_time "$MD_CLUSTER_OWNER")" >"$STATE/owner"
	fi
	write_configs "$n" "$net"
	make_network "$n" "$net"
	etc_hosts_add "$n" "$net"
	for i in $(seq "$n"); do
		start_host "$i"
	done
	for i in $(seq "$n"); do
		find_host_pid1 "$i"
	done
	probe_all "$n" 100 || die "cluster $NAME: not every host answers in 10 s"
	trap - ERR
	echo "cluster.sh: cluster $NAME up: $n hosts $(tr '\n' ' ' <"$STATE/hostfile")on $net.0/24, bridge $BR" >&2
	echo "$STATE/hostfile"
}

cmd_down() {
	need_root
	lock
	teardown
	[ -z "$(ls -A $ROOT 2>/dev/null)" ] && rmdir $ROOT 2>/dev/null || true
}

cmd_env() {
	[ -f "$STATE/env" ] || die "cluster $NAME is not up: scripts/cluster.sh up N"
	local k v
	while IFS='=' read -r k v; do
		printf "export %s='%s'\n" "$k" "$v"
	done <"$STATE/env"
}

cmd_exec() {
	local h=${1:-} pid st upid ust
	[ -n "$h" ] && [ $# -ge 2 ] || die "exec needs a host and a command: scripts/cluster.sh exec ${PREFIX}1 ps -e"
	shift
	[ -f "$STATE/pids/$h" ] || die "no host '$h' in cluster $NAME: hosts are $(tr '\n' ' ' <"$STATE/hostfile" 2>/dev/null || echo none; true)"
	read -r pid st upid ust <"$STATE/pids/$h"
	same_proc "$pid" "$st" || die "host $h of cluster $NAME is down (its sshd, pid $pid, is gone): scripts/cluster.sh up again"
	exec nsenter -t "$pid" -m -u -n -p -- /bin/sh -c \
		'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' sh "$PWD" "$@"
}

cmd_status() {
	local h pid st upid ust ok=0
	[ -f "$STATE/n" ] || { echo "cluster $NAME: down"; return 1; }
	while read -r h; do
		read -r pid st upid ust <"$STATE/pids/$h" 2>/dev/null || true
		if same_proc "${pid:-}" "${st:-}"; then
			echo "$h: up, sshd pid $pid"
		else
			echo "$h: DOWN"
			ok=1
		fi
	done <"$STATE/hostfile"
	return $ok
}

check_names
case ${1:-} in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
env) cmd_env ;;
exec) shift; cmd_exec "$@" ;;
status) cmd_status ;;
*) die "usage: scripts/cluster.sh up N | down | exec HOST CMD... | env | status" ;;
esac
