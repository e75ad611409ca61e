#!/usr/bin/env bash
# Make a stripped libmpi and its separate debug file from the source-built
# Open MPI (scripts/build-openmpi.sh), the way distributions ship them:
#
#   OUT/libmpi.so         no .debug_*, with a .gnu_debuglink to:
#   OUT/libmpi.so.debug   objcopy --only-keep-debug of the original
#
# For the separate-debug-file demo: the types of OUT/libmpi.so are then
# found through its debuglink (the collector says "separate debug file").
#
#   make-stripped-libmpi.sh [OUT]   (default: $MPID_CACHE/stripped-libmpi)
#   MPID_CACHE   cache folder (default /var/cache/mpi-deadlock)
#
# Prints the stripped library's path on its last line.
set -euo pipefail

cache=${MPID_CACHE:-/var/cache/mpi-deadlock}
prefix=$cache/openmpi-4.1.4-g
out=${1:-$cache/stripped-libmpi}

if [ ! -f "$prefix/.mpi-deadlock-built" ]; then
	echo "make-stripped-libmpi: no source-built Open MPI in $prefix;" \
	     "run scripts/build-openmpi.sh first" >&2
	exit 1
fi
lib=$(readlink -f "$prefix/lib/libmpi.so")
mkdir -p "$out"
# The debuglink records the debug file's name and CRC: write the debug
# file first, then strip with a link to it.
objcopy --only-keep-debug "$lib" "$out/libmpi.so.debug"
objcopy --strip-debug --add-gnu-debuglink="$out/libmpi.so.debug" \
	"$lib" "$out/libmpi.so"
if readelf -S "$out/libmpi.so" | grep -q '\.debug_info'; then
	echo "make-stripped-libmpi: $out/libmpi.so still has .debug_info" >&2
	exit 1
fi
echo "$out/libmpi.so"
