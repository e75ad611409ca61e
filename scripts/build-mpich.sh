#!/usr/bin/env bash
# Build MPICH 4.0.2 with -g and its message-queue DLL (libtvmpich.so) from
# Debian's own source package, once per machine, into the same cache as
# the -g Open MPI. Safe to run again: a finished build is detected by its
# stamp file and reused.
#
# Device ch3:nemesis: MPICH's message-queue support for ch4 is broken in
# 4.0.0-4.0.2 (fixed in 4.0.3); ch3's works.
#
#   MPID_CACHE   cache folder (default /var/cache/mpi-deadlock)
#
#   --source-only   fetch and unpack the source (what the MQD ABI test
#                   reads), do not build; prints the source folder
#
# Prints the install prefix on its last line.
set -euo pipefail
mode=${1:-build}

cache=${MPID_CACHE:-/var/cache/mpi-deadlock}
prefix=$cache/mpich-4.0.2-g
stamp=$prefix/.mpi-deadlock-built

if [ -f "$stamp" ] && [ "$mode" != --source-only ]; then
	echo "$prefix"
	exit 0
fi

# The source alone needs no lock once unpacked (a build in that tree
# does not change its headers).
src_tree=$cache/src-mpich/pristine/mpich-4.0.2
if [ "$mode" = --source-only ] && [ -f "$src_tree/configure" ]; then
	echo "$src_tree"
	exit 0
fi

# One build at a time: a second run (another test run, a helper) waits
# for the first and then reuses what it built.
mkdir -p "$cache"
exec 9>"$cache/.build-mpich.lock"
if ! flock -n 9; then
	echo "build-mpich: another build is running; waiting for it" >&2
	flock 9
fi
if [ -f "$stamp" ] && [ "$mode" != --source-only ]; then
	echo "$prefix"
	exit 0
fi

mkdir -p "$cache/src-mpich"
cd "$cache/src-mpich"
# apt-get source needs a deb-src line for bookworm main (scripts/setup.sh
# adds one); the download is kept here, so it happens once.
if ! ls mpich_4.0.2.orig.tar.* >/dev/null 2>&1; then
	if ! apt-get source --download-only mpich >apt-source.log 2>&1; then
		echo "build-mpich: 'apt-get source mpich' failed (see $cache/src-mpich/apt-source.log);" \
		     "add a deb-src line for bookworm main and run apt-get update" >&2
		exit 1
	fi
fi
# The upstream tarball, not Debian's patched tree: Debian's patches touch
# autotools inputs, after which make wants to regenerate them.
if [ "$mode" = --source-only ]; then
	if [ ! -f pristine/mpich-4.0.2/configure ]; then
		rm -rf pristine && mkdir pristine
		tar -xf mpich_4.0.2.orig.tar.* -C pristine
	fi
	echo "$cache/src-mpich/pristine/mpich-4.0.2"
	exit 0
fi
# No stamp: no finished build. Start from a fresh tree, not from one a
# stopped build left half made (a resumed make failed here once).
rm -rf pristine && mkdir pristine
tar -xf mpich_4.0.2.orig.tar.* -C pristine
cd pristine/mpich-4.0.2

log=$cache/mpich-build.log
start=$(date +%s)
echo "build-mpich: building MPICH 4.0.2 (ch3:nemesis, -g, debuginfo) into $prefix (about 10 minutes on 2 quiet cores, far longer on a loaded machine; log in $log)" >&2
{
	./configure --prefix="$prefix" --with-device=ch3:nemesis \
		--enable-debuginfo --enable-g=dbg --disable-fortran \
		--disable-cxx --disable-romio CFLAGS="-g -O1" &&
	make -j"$(nproc)" &&
	make install
} >"$log" 2>&1 || {
	echo "build-mpich: build failed, last lines of $log:" >&2
	tail -20 "$log" >&2
	exit 1
}
touch "$stamp"
echo "build-mpich: built in $((($(date +%s) - start) / 60)) minutes" >&2
echo "$prefix"
