/*
 * mpirun.c - the starter of the fake job (tests/fault_fake_test.c),
 * built by the Makefile and never run: the MPIR process acquisition
 * symbols of Open MPI 4's mpirun, which the test fills in the fake's
 * memory.
 */
struct MPIR_PROCDESC {
	char *host_name;
	char *executable_name;
	int pid;
};

struct MPIR_PROCDESC *MPIR_proctable;
int MPIR_proctable_size;
volatile int MPIR_debug_state;
volatile int MPIR_being_debugged;

void MPIR_Breakpoint(void);

void MPIR_Breakpoint(void)
{
}

int main(void)
{
	MPIR_Breakpoint();
	return MPIR_proctable_size;
}
