#!/bin/bash
# The batch recipe of doc/slurm.md (keep the two copies in step): a batch
# job that reports why it hangs before its time limit.
#SBATCH --job-name=mpi-app
#SBATCH --ntasks=4
#SBATCH --time=01:00:00
#SBATCH --signal=B:USR1@120

MPI_DEADLOCK=${MPI_DEADLOCK:-mpi-deadlock}
REPORT_DIR=${REPORT_DIR:-${SLURM_SUBMIT_DIR:-$PWD}}

# Slurm sends USR1 to this shell (B:) 120 s before the time limit: report
# on every step of the job while it is still there (the report goes to
# the job's output file), then end the step ourselves.
on_usr1() {
	echo "mpi-deadlock: time limit near, looking at job $SLURM_JOB_ID" >&2
	"$MPI_DEADLOCK" --slurm "$SLURM_JOB_ID" \
		--junit "$REPORT_DIR/deadlock-$SLURM_JOB_ID.xml"
	echo "mpi-deadlock exit $?" >&2
	kill -TERM "$STEP_PID" 2>/dev/null
}
trap on_usr1 USR1

# In the background, so that bash runs the trap while it waits (a
# foreground command would delay the trap until it ends).  The starter is
# srun (--mpi=pmix) or mpirun: give it as the arguments.
"$@" </dev/null &
STEP_PID=$!
wait "$STEP_PID"
status=$?
# wait returns early (status > 128) when the signal arrives: wait again
# until the step has really ended.
while kill -0 "$STEP_PID" 2>/dev/null; do
	wait "$STEP_PID"
	status=$?
done
exit "$status"
