/* calls.c - what an MPI call means for waiting: the call tables. */
#include "calls.h"

#include <string.h>

static const char *const collectives[] = {
	"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
	"MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
	"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
	"MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
	"MPI_Scan", "MPI_Exscan", "MPI_Comm_split", "MPI_Comm_split_type",
	"MPI_Comm_dup", "MPI_Comm_create", "MPI_Cart_create",
	"MPI_Graph_create", "MPI_Intercomm_create", "MPI_Intercomm_merge",
	"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_fence", "MPI_Win_free",
	"MPI_File_open", "MPI_File_close", NULL,
};

static const struct {
	const char *name;
	enum anl_call_class cls;
} p2p[] = {
	{ "MPI_Recv", ANL_CALL_RECV },
	{ "MPI_Probe", ANL_CALL_PROBE },
	{ "MPI_Mprobe", ANL_CALL_PROBE },
	{ "MPI_Mrecv", ANL_CALL_RECV },
	{ "MPI_Send", ANL_CALL_SEND },
	{ "MPI_Ssend", ANL_CALL_SEND },
	{ "MPI_Bsend", ANL_CALL_SEND },
	{ "MPI_Rsend", ANL_CALL_SEND },
	{ "MPI_Sendrecv", ANL_CALL_SENDRECV },
	{ "MPI_Sendrecv_replace", ANL_CALL_SENDRECV },
	{ "MPI_Wait", ANL_CALL_WAIT },
	{ "MPI_Waitall", ANL_CALL_WAITALL },
	{ "MPI_Waitany", ANL_CALL_WAITANY },
	{ "MPI_Waitsome", ANL_CALL_WAITANY },
	{ "MPI_Finalize", ANL_CALL_FINALIZE },
};

enum anl_call_class anl_call_class(const char *call)
{
	if (!call)
		return ANL_CALL_NONE;
	for (size_t i = 0; i < sizeof(p2p) / sizeof(p2p[0]); i++)
		if (!strcmp(call, p2p[i].name))
			return p2p[i].cls;
	for (int i = 0; collectives[i]; i++)
		if (!strcmp(call, collectives[i]))
			return ANL_CALL_COLL;
	/* Anything else (MPI_Isend, MPI_Test, MPI_Comm_rank, ...) returns
	 * without waiting on another rank. */
	return ANL_CALL_NONBLOCKING;
}
