#!/bin/sh
# build-samples.sh BUILD_DIR - build every samples/*.c with -g -O0 (exact
# file:line) for each Open MPI setup found:
#   BUILD_DIR/samples/debian/  Debian's mpicc (always)
#   BUILD_DIR/samples/ompi-g/  the -g Open MPI of scripts/build-openmpi.sh,
#                              once its .mpi-deadlock-built stamp exists
#   BUILD_DIR/samples/mpich/   the -g MPICH of scripts/build-mpich.sh, the
#                              same way
# Incremental: a binary newer than its source and samples/sample.h is kept.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 BUILD_DIR" >&2
	exit 64
fi
build=$1
src=$(cd "$(dirname "$0")/.." && pwd)/samples
ompig=${MD_OMPI_G:-/var/cache/mpi-deadlock/openmpi-4.1.4-g}
mpichg=${MD_MPICH_G:-/var/cache/mpi-deadlock/mpich-4.0.2-g}

# build_setup NAME MPICC
build_setup() {
	out=$build/samples/$1
	mkdir -p "$out"
	for c in "$src"/*.c; do
		bin=$out/$(basename "$c" .c)
		if [ -x "$bin" ] && [ "$bin" -nt "$c" ] &&
		   [ "$bin" -nt "$src/sample.h" ] && [ "$bin" -nt "$2" ]; then
			continue
		fi
		echo "  MPICC($1) $bin"
		# Compile in samples/ with a relative name: DW_AT_name is then
		# "ring.c", the file name the manifest and the reports use.
		(cd "$src" && "$2" -g -O0 -Wall -Wextra -o "$bin.tmp" \
			"$(basename "$c")" -lpthread)
		mv "$bin.tmp" "$bin"
	done
}

case $build in
/*) ;;
*) build=$(pwd)/$build ;;
esac

if command -v mpicc >/dev/null 2>&1; then
	build_setup debian "$(command -v mpicc)"
else
	echo "build-samples: no mpicc in PATH (apt-get install libopenmpi-dev): Debian samples not built" >&2
fi

if [ -e "$ompig/.mpi-deadlock-built" ]; then
	build_setup ompi-g "$ompig/bin/mpicc"
else
	echo "build-samples: $ompig not built yet (scripts/build-openmpi.sh): ompi-g samples skipped" >&2
fi

if [ -e "$mpichg/.mpi-deadlock-built" ]; then
	build_setup mpich "$mpichg/bin/mpicc"
else
	echo "build-samples: $mpichg not built yet (scripts/build-mpich.sh): mpich samples skipped" >&2
fi
