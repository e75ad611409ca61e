/*
 * peruse.h - stand-in for Open MPI's ompi/peruse/peruse.h, which Debian's
 * libopenmpi-dev does not ship although ompi/peruse/peruse-internal.h
 * (included by the pml base headers) includes it.
 *
 * Only what the installed headers use is declared here: the event handle,
 * the communication spec, the callback type and the event enums.  None of
 * it takes part in the layouts the message-queue DLL asks about (Debian
 * builds with OMPI_WANT_PERUSE 0), so the copy only has to compile.
 * Declarations follow Open MPI 4.1.4's ompi/peruse/peruse.h.
 *
 * It is compiled into mpi-deadlock (scripts/embed.sh); dt_provider_build()
 * writes it to <cache>/build-XXXXXX/inc/ompi/peruse/peruse.h.
 */
#ifndef _PERUSE_H_
#define _PERUSE_H_

#include "mpi.h"

typedef void *peruse_event_h;

typedef struct _peruse_comm_spec_t {
	MPI_Comm comm;
	void *buf;
	int count;
	MPI_Datatype datatype;
	int peer;
	int tag;
	int operation;
} peruse_comm_spec_t;

typedef int(peruse_comm_callback_f)(peruse_event_h event_h,
				    MPI_Aint unique_id,
				    peruse_comm_spec_t *spec, void *param);

enum {
	PERUSE_SUCCESS = 0,
	PERUSE_ERR_INIT,
	PERUSE_ERR_GENERIC,
	PERUSE_ERR_MALLOC,
	PERUSE_ERR_EVENT,
	PERUSE_ERR_EVENT_HANDLE,
	PERUSE_ERR_PARAMETER,
	PERUSE_ERR_MPI_INIT,
	PERUSE_ERR_COMM,
	PERUSE_ERR_MPI_OBJECT
};

enum {
	PERUSE_EVENT_INVALID = -1,
	PERUSE_COMM_REQ_ACTIVATE,
	PERUSE_COMM_REQ_MATCH_UNEX,
	PERUSE_COMM_REQ_INSERT_IN_POSTED_Q,
	PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q,
	PERUSE_COMM_REQ_XFER_BEGIN,
	PERUSE_COMM_REQ_XFER_CONTINUE,
	PERUSE_COMM_REQ_XFER_END,
	PERUSE_COMM_REQ_COMPLETE,
	PERUSE_COMM_REQ_NOTIFY,
	PERUSE_COMM_MSG_ARRIVED,
	PERUSE_COMM_MSG_INSERT_IN_UNEX_Q,
	PERUSE_COMM_MSG_REMOVE_FROM_UNEX_Q,
	PERUSE_COMM_MSG_MATCH_POSTED_REQ,
	PERUSE_COMM_SEARCH_POSTED_Q_BEGIN,
	PERUSE_COMM_SEARCH_POSTED_Q_END,
	PERUSE_COMM_SEARCH_UNEX_Q_BEGIN,
	PERUSE_COMM_SEARCH_UNEX_Q_END,
	PERUSE_CUSTOM_EVENT
};

enum { PERUSE_PER_COMM = 0, PERUSE_GLOBAL };

enum { PERUSE_SEND = 0, PERUSE_RECV };

#define PERUSE_EVENT_HANDLE_NULL ((peruse_event_h)0)

#endif /* _PERUSE_H_ */
