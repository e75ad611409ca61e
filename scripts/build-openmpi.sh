#!/usr/bin/env bash
# Build Open MPI 4.1.4 with -g from Debian's own source package, once per
# machine, into a cache outside the repository. Safe to run again: a
# finished build is detected by its stamp file and reused.
#
#   MPID_CACHE   cache folder (default /var/cache/mpi-deadlock)
#
# Prints the install prefix on its last line.
set -euo pipefail

cache=${MPID_CACHE:-/var/cache/mpi-deadlock}
prefix=$cache/openmpi-4.1.4-g
stamp=$prefix/.mpi-deadlock-built

if [ -f "$stamp" ]; then
	echo "$prefix"
	exit 0
fi

# One build at a time: a second run (another test run, a helper) waits
# for the first and then reuses what it built.
mkdir -p "$cache"
exec 9>"$cache/.build-openmpi.lock"
if ! flock -n 9; then
	echo "build-openmpi: another build is running; waiting for it" >&2
	flock 9
fi
if [ -f "$stamp" ]; then
	echo "$prefix"
	exit 0
fi

mkdir -p "$cache/src"
cd "$cache/src"
if [ ! -d openmpi-4.1.4 ]; then
	if ! apt-get source openmpi >apt-source.log 2>&1; then
		echo "build-openmpi: 'apt-get source openmpi' failed (see $cache/src/apt-source.log);" \
		     "add a deb-src line for bookworm main and run apt-get update" >&2
		exit 1
	fi
fi
# Build from the package's upstream tarball: Debian's patches touch
# Makefile.am files, after which make wants automake to regenerate them.
if [ ! -f pristine/openmpi-4.1.4/configure ]; then
	rm -rf pristine && mkdir pristine
	tar -xf openmpi_4.1.4.orig.tar.* -C pristine
fi
cd pristine/openmpi-4.1.4

log=$cache/openmpi-build.log
echo "build-openmpi: building Open MPI 4.1.4 with -g into $prefix (about 7 minutes, log in $log)" >&2
{
	./configure --prefix="$prefix" CFLAGS="-g -O1" \
		--disable-mpi-fortran --disable-oshmem --disable-mpi-java \
		--disable-io-romio --without-ucx --without-verbs --without-ofi \
		--without-psm2 --without-cuda --enable-mpi-cxx=no &&
	make -j"$(nproc)" &&
	make install
} >"$log" 2>&1 || {
	echo "build-openmpi: build failed, last lines of $log:" >&2
	tail -20 "$log" >&2
	exit 1
}
touch "$stamp"
echo "$prefix"
