# build-common.sh - sourced by build-openmpi.sh and build-mpich.sh: what
# building an MPI from Debian's source package into the cache takes
# (the stamp of a finished build, one build at a time, the download, the
# upstream tarball unpacked, configure/make/install with its log).
# Each function exits the script with a message naming the fix.
#
# The caller sets: name (build-openmpi), prefix, stamp.
# shellcheck shell=bash disable=SC2154

# A finished build: print its prefix and end the script.
build_reuse() {
	if [ -f "$stamp" ]; then
		echo "$prefix"
		exit 0
	fi
}

# One build at a time: a second run (another test run, a helper) waits
# for the first and then reuses what it built.
build_lock() {
	local lock=$1
	mkdir -p "$(dirname "$lock")"
	exec 9>"$lock"
	if ! flock -n 9; then
		echo "$name: another build is running; waiting for it" >&2
		flock 9
	fi
}

# apt-get source PKG [ARGS] in DIR unless GLOB already matches there.
# It needs a deb-src line for bookworm main (scripts/setup.sh adds one);
# the download is kept in DIR, so it happens once.
build_fetch() {
	local pkg=$1 dir=$2 have=$3
	shift 3
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # have is a glob
	if ! ls -d "$dir"/$have >/dev/null 2>&1; then
		if ! (cd "$dir" && apt-get source "$@" "$pkg" >apt-source.log 2>&1); then
			echo "$name: 'apt-get source $pkg' failed (see $dir/apt-source.log);" \
			     "add a deb-src line for bookworm main and run apt-get update" >&2
			exit 1
		fi
	fi
}

# The package's upstream tarball, unpacked afresh into DIR/pristine: not
# Debian's patched tree (its patches touch autotools inputs, after which
# make wants to regenerate them), and not a tree a stopped build left
# half made.
build_unpack() {
	local dir=$1 tarball=$2
	rm -rf "$dir/pristine" && mkdir "$dir/pristine"
	# shellcheck disable=SC2086 # tarball is a glob
	tar -xf "$dir"/$tarball -C "$dir/pristine"
}

# configure ARGS, make, make install in the current folder, all into
# LOG; on failure its last lines and exit.  Then the stamp.
build_run() {
	local log=$1
	shift
	{
		./configure --prefix="$prefix" "$@" &&
		make -j"$(nproc)" &&
		make install
	} >"$log" 2>&1 || {
		echo "$name: build failed, last lines of $log:" >&2
		tail -20 "$log" >&2
		exit 1
	}
	touch "$stamp"
}
