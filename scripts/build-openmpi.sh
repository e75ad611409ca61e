#!/usr/bin/env bash
# Build Open MPI 4.1.4 with -g from Debian's own source package, once per
# machine, into a cache outside the repository. Safe to run again: a
# finished build is detected by its stamp file and reused.
#
#   MPID_CACHE   cache folder (default /var/cache/mpi-deadlock)
#
# Prints the install prefix on its last line.  Debian's unpacked tree
# ($MPID_CACHE/src/openmpi-4.1.4) stays: the ob1 type provider reads
# ob1's headers there.
set -euo pipefail
# shellcheck source=scripts/build-common.sh
. "$(dirname "$0")/build-common.sh"

name=build-openmpi
cache=${MPID_CACHE:-/var/cache/mpi-deadlock}
prefix=$cache/openmpi-4.1.4-g
stamp=$prefix/.mpi-deadlock-built

build_reuse
build_lock "$cache/.build-openmpi.lock"
build_reuse

build_fetch openmpi "$cache/src" openmpi-4.1.4
build_unpack "$cache/src" 'openmpi_4.1.4.orig.tar.*'
cd "$cache/src/pristine/openmpi-4.1.4"

log=$cache/openmpi-build.log
echo "$name: building Open MPI 4.1.4 with -g into $prefix (about 7 minutes, log in $log)" >&2
build_run "$log" CFLAGS="-g -O1" \
	--disable-mpi-fortran --disable-oshmem --disable-mpi-java \
	--disable-io-romio --without-ucx --without-verbs --without-ofi \
	--without-psm2 --without-cuda --enable-mpi-cxx=no
echo "$prefix"
