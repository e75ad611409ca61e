/* calls.c - the analyzer's reading of the table of MPI calls. */
#include "calls.h"

#include <string.h>

enum md_call_class anl_call_class(const char *call)
{
	return md_call_class(call);
}

enum md_call_class anl_poll_class(const char *call)
{
	static const struct {
		const char *poll;
		enum md_call_class as;
	} polls[] = {
		{ "MPI_Test", MD_CALL_WAIT },
		{ "MPI_Testall", MD_CALL_WAITALL },
		{ "MPI_Testany", MD_CALL_WAITANY },
		{ "MPI_Testsome", MD_CALL_WAITANY },
		{ "MPI_Request_get_status", MD_CALL_WAIT },
		{ "MPI_Iprobe", MD_CALL_PROBE },
		{ "MPI_Improbe", MD_CALL_PROBE },
		{ "MPI_Win_test", MD_CALL_RMA_SYNC },
	};
	enum md_call_class cls = md_call_class(call);

	if (cls != MD_CALL_POLL)
		return cls;
	for (size_t i = 0; i < sizeof(polls) / sizeof(polls[0]); i++)
		if (!strcmp(call, polls[i].poll))
			return polls[i].as;
	return cls;
}
