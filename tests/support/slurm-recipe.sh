#!/bin/bash
# slurm-recipe.sh - the batch script of doc/slurm.md (keep the two in step);
# tests/e2e_run_test.c runs it with bash and sends it SIGUSR1 as Slurm
# would.  Outside Slurm the SLURM_* variables and MPIRUN may be set by hand.
#SBATCH --job-name=mpi-app
#SBATCH --ntasks=4
#SBATCH --time=01:00:00
#SBATCH --signal=B:USR1@120

MPI_DEADLOCK=${MPI_DEADLOCK:-mpi-deadlock}
MPIRUN=${MPIRUN:-mpirun}
REPORT_DIR=${REPORT_DIR:-$PWD}
JOB=${SLURM_JOB_ID:-local}

# Slurm sends USR1 to this shell 120 s before the time limit: report on
# the job while it is still there, then end it ourselves.
on_usr1() {
	"$MPI_DEADLOCK" --attach "$MPIRUN_PID" -q \
		--junit "$REPORT_DIR/deadlock-$JOB.xml" \
		--snapshot "$REPORT_DIR/deadlock-$JOB.snap"
	echo "mpi-deadlock exit $?" >&2
	kill -TERM "$MPIRUN_PID" 2>/dev/null
}
trap on_usr1 USR1

# In the background, so that bash can run the trap while it waits
# (a foreground command would delay the trap until it ends).
$MPIRUN "$@" </dev/null &
MPIRUN_PID=$!
wait "$MPIRUN_PID"
status=$?
# wait returns early (status > 128) when the signal arrives: wait again
# until mpirun has really ended.
while kill -0 "$MPIRUN_PID" 2>/dev/null; do
	wait "$MPIRUN_PID"
	status=$?
done
exit "$status"
