#!/usr/bin/env bash
# Run every test of mpi-deadlock on a fresh Debian bookworm machine:
# installs what is missing, builds the -g Open MPI once (cached outside
# the repository), builds, and runs the unit and end-to-end tests in one
# Criterion run whose last line counts them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make -j"$(nproc)" all build/md-tests
make test
