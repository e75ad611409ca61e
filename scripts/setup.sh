#!/usr/bin/env bash
# Install what mpi-deadlock needs on Debian bookworm, then build the -g
# Open MPI (and, opted in, the -g MPICH) into the cache, once per machine.
# Safe to run again: it
# installs only what is missing and reuses the cached build.
#
#   MPID_CACHE        cache folder (default /var/cache/mpi-deadlock)
#   MD_SKIP_OMPI_G=1  do not build the -g Open MPI (the end-to-end tests
#                     against it are then skipped, with the reason)
#   MD_E2E_MPICH=1    also build the -g MPICH (scripts/build-mpich.sh) for
#                     the e2e_mpich suites, which then run (opt-in until
#                     they have passed here; MD_SKIP_MPICH=1 still skips)
set -euo pipefail

pkgs=(build-essential pkg-config ca-certificates openmpi-bin libopenmpi-dev
      libigraph-dev libdwarf-dev libelf-dev libunwind-dev libcriterion-dev
      libyajl-dev uthash-dev dpkg-dev openssh-server iproute2 procps
      jq clang clang-format python3
      slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
      mpich libmpich-dev)
pkgs+=("$@")

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

# apt-get source openmpi (and mpich) needs a deb-src line for bookworm main.
src=/etc/apt/sources.list.d/mpi-deadlock-src.sources
added_src=0
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	$sudo tee "$src" >/dev/null <<'S'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
S
	added_src=1
fi

# openssh-server is there for the sshd of each test host (scripts/cluster.sh
# starts them itself); the machine's own sshd service must not start: Debian
# never runs it while /etc/ssh/sshd_not_to_be_run exists.
if [[ " ${missing[*]} " == *" openssh-server "* ]] && [ ! -e /etc/ssh/sshd_not_to_be_run ]; then
	$sudo mkdir -p /etc/ssh
	$sudo touch /etc/ssh/sshd_not_to_be_run
fi

if [ ${#missing[@]} -gt 0 ] || [ $added_src -eq 1 ]; then
	echo "setup: installing ${missing[*]:-(package lists only)}" >&2
	$sudo apt-get update -q >/dev/null
	if [ ${#missing[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
			--no-install-recommends "${missing[@]}" >/dev/null
	fi
fi

# Debian's MPICH (no message-queue DLL: the e2e_mpich_debian suite) sits
# beside Open MPI; the mpicc/mpirun alternatives must stay Open MPI's
# (its priority, 50, beats MPICH's 40; set them if someone changed that).
for alt in mpi mpirun; do
	best=/usr/bin/$([ $alt = mpi ] && echo mpicc || echo mpirun).openmpi
	if [ "$(update-alternatives --query $alt 2>/dev/null | sed -n 's/^Value: //p')" != "$best" ]; then
		echo "setup: pointing the $alt alternative back at Open MPI" >&2
		$sudo update-alternatives --set $alt "$best" >/dev/null
	fi
done

if [ "${MD_SKIP_OMPI_G:-0}" != 1 ]; then
	"$(dirname "$0")/build-openmpi.sh" >/dev/null
fi
# MPICH (issue 12): its source always (the MQD ABI test reads MPICH's
# mpi_interface.h); the -g build only with MD_E2E_MPICH=1, like its
# end-to-end suites, until they have passed here.
if [ "${MD_E2E_MPICH:-0}" = 1 ] && [ "${MD_SKIP_MPICH:-0}" != 1 ]; then
	"$(dirname "$0")/build-mpich.sh" >/dev/null
else
	"$(dirname "$0")/build-mpich.sh" --source-only >/dev/null
fi
