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
# shellcheck source=scripts/build-common.sh
. "$(dirname "$0")/build-common.sh"
mode=${1:-build}

name=build-mpich
cache=${MPID_CACHE:-/var/cache/mpi-deadlock}
prefix=$cache/mpich-4.0.2-g
stamp=$prefix/.mpi-deadlock-built
src=$cache/src-mpich

# The source alone needs no lock once unpacked (a build in that tree
# does not change its headers).
if [ "$mode" = --source-only ]; then
	if [ ! -f "$src/pristine/mpich-4.0.2/configure" ]; then
		build_lock "$cache/.build-mpich.lock"
		if [ ! -f "$src/pristine/mpich-4.0.2/configure" ]; then
			build_fetch mpich "$src" 'mpich_4.0.2.orig.tar.*' --download-only
			build_unpack "$src" 'mpich_4.0.2.orig.tar.*'
		fi
	fi
	echo "$src/pristine/mpich-4.0.2"
	exit 0
fi

build_reuse
build_lock "$cache/.build-mpich.lock"
build_reuse

build_fetch mpich "$src" 'mpich_4.0.2.orig.tar.*' --download-only
build_unpack "$src" 'mpich_4.0.2.orig.tar.*'
cd "$src/pristine/mpich-4.0.2"

log=$cache/mpich-build.log
start=$(date +%s)
echo "$name: building MPICH 4.0.2 (ch3:nemesis, -g, debuginfo) into $prefix (about 10 minutes on 2 quiet cores, far longer on a loaded machine; log in $log)" >&2
build_run "$log" --with-device=ch3:nemesis \
	--enable-debuginfo --enable-g=dbg --disable-fortran \
	--disable-cxx --disable-romio CFLAGS="-g -O1"
echo "$name: built in $((($(date +%s) - start) / 60)) minutes" >&2
echo "$prefix"
