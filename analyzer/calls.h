/* calls.h - what an MPI call means for the analyzer's waiting, on top of
 * the one table of MPI calls (include/mpicall.h). */
#ifndef MD_CALLS_H
#define MD_CALLS_H

#include "mpicall.h"

/* The class of the MPI call by standard name; NULL is MD_CALL_NONE. */
enum md_call_class anl_call_class(const char *call);

/*
 * A polling call in a loop that does not move (a spin-wait) stands for
 * the blocking call it polls for: MPI_Test for MPI_Wait, MPI_Testall for
 * MPI_Waitall, MPI_Testany/Testsome for MPI_Waitany, MPI_Iprobe and
 * MPI_Improbe for MPI_Probe, MPI_Win_test for MPI_Win_wait.  Any other
 * call gives its own class.
 */
enum md_call_class anl_poll_class(const char *call);

#endif /* MD_CALLS_H */
