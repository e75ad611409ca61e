/*
 * libmpi.c - the MPI library of the fake job (tests/fault_fake_test.c),
 * built by the Makefile as libmpi.so.40 with -g and never run: the test
 * lays it out in fake ranks.  It has what the collector and the fake
 * DLL (tests/fakedll/fakedll.c) look for in Open MPI's libmpi: the types
 * whose fields they read (ompi_request_t.req_complete,
 * mca_pml_base_request_t.req_sequence), ompi_mpi_communicators,
 * MPIR_dll_name (the test writes the DLL's path there in the fake's
 * memory), and an MPI_Recv for the ranks' stacks to stop in.
 */
struct ompi_request_t {
	void *super[4];
	volatile void *req_complete;
	int req_state;
};
typedef struct ompi_request_t ompi_request_t;

struct mca_pml_base_request_t {
	ompi_request_t req_ompi;
	unsigned long req_sequence;
};
typedef struct mca_pml_base_request_t mca_pml_base_request_t;

/* Used, so that their types are in the DWARF. */
ompi_request_t ompi_request_null;
mca_pml_base_request_t md_fake_base_request;
void *ompi_mpi_communicators[4] = { &ompi_request_null };
char MPIR_dll_name[256] = "";

int MPI_Recv(void *buf, int count);

int MPI_Recv(void *buf, int count)
{
	volatile char *b = buf;

	while (count > 0 && !ompi_request_null.req_complete)
		b[0] = 0;
	return 0;
}
