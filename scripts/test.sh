#!/usr/bin/env bash
# Run every test of mpi-deadlock on a fresh Debian bookworm machine:
# installs what is missing, builds the -g Open MPI once (cached outside
# the repository), builds, and runs the unit and end-to-end tests in one
# Criterion run whose last line counts them.
#
# The multi-host tests run on a test cluster (scripts/cluster.sh) of
# MD_TEST_HOSTS hosts (default 3) brought up here, as an instance of this
# run's own (MD_CLUSTER=t<pid>, so runs in parallel never meet), and
# brought down on every path.  The tests find it through
# MD_CLUSTER_HOSTFILE; without it they are skipped, or fail when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make -j"$(nproc)" all build/md-tests

export MD_CLUSTER=t$$
cluster_down() { scripts/cluster.sh down || true; }
trap cluster_down EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
if hostfile=$(MD_CLUSTER_OWNER=$$ scripts/cluster.sh up "${MD_TEST_HOSTS:-3}" | tail -n 1) &&
   [ -f "$hostfile" ]; then
	export MD_CLUSTER_HOSTFILE=$hostfile
else
	echo "test: no test cluster: the multi-host tests are skipped (they fail with CI=true)" >&2
fi
make test
