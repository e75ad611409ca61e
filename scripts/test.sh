#!/usr/bin/env bash
# Run every test of mpi-deadlock on a fresh Debian bookworm machine:
# installs what is missing, builds the -g Open MPI once (cached outside
# the repository), builds, and runs the unit and end-to-end tests in one
# Criterion run whose last line counts them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make -j"$(nproc)" all build/md-tests
# The many-host suites (e2e_hosts_*, doc/agents.md) run on a test cluster
# of 3 hosts; it is brought down again on every exit.  Without root or
# sshd those suites skip and say why.
if [ "$(id -u)" -eq 0 ] && [ -x /usr/sbin/sshd ]; then
	export MD_CLUSTER=${MD_CLUSTER:-mdtest}
	trap 'scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
	scripts/cluster.sh up 3 >/dev/null
	eval "$(scripts/cluster.sh env)"
fi
make test
