/* calls.h - classes of MPI calls by how they wait (analyzer only). */
#ifndef MD_CALLS_H
#define MD_CALLS_H

enum anl_call_class {
	ANL_CALL_NONE,		/* not in MPI */
	ANL_CALL_NONBLOCKING,	/* returns without waiting on a peer */
	ANL_CALL_RECV,		/* waits for its receive */
	ANL_CALL_PROBE,		/* waits for a message; posts no op */
	ANL_CALL_SEND,		/* waits for its send */
	ANL_CALL_SENDRECV,	/* both: AND */
	ANL_CALL_WAIT,		/* one request */
	ANL_CALL_WAITALL,	/* all its requests: AND */
	ANL_CALL_WAITANY,	/* one of its requests: OR */
	ANL_CALL_COLL,		/* a collective: AND over the others */
	ANL_CALL_FINALIZE,	/* a collective on MPI_COMM_WORLD */
};

/* The class of the MPI call by standard name; NULL is ANL_CALL_NONE. */
enum anl_call_class anl_call_class(const char *call);

#endif /* MD_CALLS_H */
