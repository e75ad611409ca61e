/*
 * app.c - the rank program of the fake job (tests/fault_fake_test.c),
 * linked by the Makefile against the fake libmpi.so.40 and never run.
 */
int MPI_Recv(void *buf, int count);

int main(void)
{
	char buf[8];

	return MPI_Recv(buf, (int)sizeof(buf));
}
