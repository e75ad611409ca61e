#!/usr/bin/env bash
# Run every test of mpi-deadlock on a fresh Debian bookworm machine:
# installs what is missing, builds the -g Open MPI once (cached outside
# the repository), builds, and runs the unit and end-to-end tests in one
# Criterion run whose last line counts them.
#
# The many-host suites (e2e_cluster*, e2e_hosts_*) run on a test cluster
# (scripts/cluster.sh, doc/cluster.md) of MD_TEST_HOSTS hosts (default 3),
# an instance of this run's own (MD_CLUSTER=t<pid>, tied to this shell by
# MD_CLUSTER_OWNER: runs in parallel never meet, and a run killed with
# SIGKILL is cleaned up by the next `up`), brought down on every exit.
# Its `env` is exported (MD_CLUSTER_HOSTFILE, the ssh agent and subnet for
# Open MPI).  Without it those suites skip and say why (CI=true: fail).
# Slurm runs on its hosts (scripts/slurm.sh, doc/slurm.md) for e2e_slurm;
# its `env` (SLURM_CONF) is exported too, and it is stopped first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make -j"$(nproc)" all build/md-tests

export MD_CLUSTER=t$$
# The hosts' /tmp is their own: a clone under /tmp is bound into them.
export MD_CLUSTER_SHARE=$PWD
trap 'scripts/slurm.sh down >/dev/null 2>&1 || true; scripts/cluster.sh down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
if hostfile=$(MD_CLUSTER_OWNER=$$ scripts/cluster.sh up "${MD_TEST_HOSTS:-3}" | tail -n 1) &&
   [ -f "$hostfile" ]; then
	eval "$(scripts/cluster.sh env)"
	# Slurm on those hosts (e2e_slurm): munge, slurmctld, one slurmd each.
	if scripts/slurm.sh up >/dev/null; then
		eval "$(scripts/slurm.sh env)"
	else
		echo "test: no Slurm on the test cluster: e2e_slurm skips (fails with CI=true)" >&2
	fi
else
	echo "test: no test cluster: the many-host tests skip (they fail with CI=true)" >&2
fi
make test
