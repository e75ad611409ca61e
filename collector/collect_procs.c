/*
 * collect_procs.c - the front end's questions about local processes
 * (see collect.h), answered through the target module.
 */
#include "collect.h"

#include "md.h"
#include "proctable.h"
#include "target.h"

int col_proc_stat(int pid, int *ppid, unsigned long long *start)
{
	struct tgt_stat st;

	if (tgt_proc_stat(pid, &st) < 0)
		return -MD_E_NOSUCH;
	if (ppid)
		*ppid = st.ppid;
	if (start)
		*start = st.start;
	return 0;
}

int col_proc_children(int pid, int **pids, int *n)
{
	return tgt_proc_children(pid, pids, n);
}

int col_find_starter(int pid)
{
	struct tgt_stat st;
	struct tgt *t;
	int found;

	if (tgt_proc_stat(pid, &st) < 0 || tgt_open(pid, &t) < 0)
		return pid;
	found = pt_find_starter(t);
	tgt_free(t);
	return found;
}

enum col_mpi col_launcher_mpi(const char *name)
{
	return pt_launcher_mpi(name);
}
