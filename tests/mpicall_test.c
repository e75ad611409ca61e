/*
 * mpicall_test.c - the one table of MPI calls (include/mpicall.h)
 * against the mpi.h of the Open MPI setups: every function declared
 * there has an entry, and every entry is declared there.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analyzer/calls.h"
#include "../collector/mpicalls.h"
#include "mpicall.h"

#define DEBIAN_MPI_H "/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h"
#define G_MPI_H "/var/cache/mpi-deadlock/openmpi-4.1.4-g/include/mpi.h"

/* The names of the functions an mpi.h declares: the identifier before
 * the '(' of each "OMPI_DECLSPEC <type> MPI_Name(" line (macros such as
 * MPI_Aint_add are not functions and have no such line). */
static int declared(const char *path, char ***out)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	char **names = NULL;
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *paren, *start;

		if (strncmp(line, "OMPI_DECLSPEC", 13) ||
		    !(paren = strchr(line, '(')))
			continue;
		while (paren > line && paren[-1] == ' ')
			paren--;
		start = paren;
		while (start > line &&
		       (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
			(start[-1] >= 'A' && start[-1] <= 'Z') ||
			(start[-1] >= '0' && start[-1] <= '9')))
			start--;
		if (strncmp(start, "MPI_", 4))
			continue;
		names = realloc(names, ((size_t)n + 1) * sizeof(*names));
		names[n++] = strndup(start, (size_t)(paren - start));
	}
	fclose(f);
	*out = names;
	return n;
}

static bool in_table(const char *name)
{
	for (int i = 0; i < md_ncalls; i++)
		if (!strcmp(md_calls[i].name, name))
			return true;
	return false;
}

static void compare_with(const char *path)
{
	char **names = NULL;
	int n = declared(path, &names), missing = 0, extra = 0;

	if (n < 0)
		cr_skip_test("%s not found: that Open MPI setup is not installed",
			     path);
	cr_assert_gt(n, 300, "%s: only %d functions parsed", path, n);
	for (int i = 0; i < n; i++) {
		if (!in_table(names[i])) {
			cr_log_error("%s declares %s: not in include/mpicall.h",
				     path, names[i]);
			missing++;
		}
	}
	for (int i = 0; i < md_ncalls; i++) {
		bool found = false;

		for (int k = 0; k < n && !found; k++)
			found = !strcmp(names[k], md_calls[i].name);
		if (!found) {
			cr_log_error("include/mpicall.h has %s: %s does not "
				     "declare it", md_calls[i].name, path);
			extra++;
		}
	}
	cr_expect_eq(missing, 0, "%d functions of %s missing", missing, path);
	cr_expect_eq(extra, 0, "%d entries not in %s", extra, path);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

Test(mpicall, every_function_of_debian_mpi_h_has_an_entry)
{
	compare_with(DEBIAN_MPI_H);
}

Test(mpicall, every_function_of_the_g_build_mpi_h_has_an_entry)
{
	compare_with(G_MPI_H);
}

Test(mpicall, table_is_in_strcmp_order_for_the_search)
{
	for (int i = 1; i < md_ncalls; i++)
		cr_expect_lt(strcmp(md_calls[i - 1].name, md_calls[i].name), 0,
			     "%s before %s", md_calls[i - 1].name,
			     md_calls[i].name);
	for (int i = 0; i < md_ncalls; i++)
		cr_expect_eq(md_call_class(md_calls[i].name), md_calls[i].cls,
			     "%s", md_calls[i].name);
}

Test(mpicall, classes_of_the_calls_that_wait)
{
	static const struct {
		const char *name;
		enum md_call_class cls;
	} want[] = {
		{ "MPI_Recv", MD_CALL_RECV },
		{ "MPI_Mrecv", MD_CALL_RECV },
		{ "MPI_Ssend", MD_CALL_SEND },
		{ "MPI_Bsend", MD_CALL_NONBLOCKING },
		{ "MPI_Sendrecv_replace", MD_CALL_SENDRECV },
		{ "MPI_Wait", MD_CALL_WAIT },
		{ "MPI_Waitall", MD_CALL_WAITALL },
		{ "MPI_Waitsome", MD_CALL_WAITANY },
		{ "MPI_Probe", MD_CALL_PROBE },
		{ "MPI_Mprobe", MD_CALL_PROBE },
		{ "MPI_Iprobe", MD_CALL_POLL },
		{ "MPI_Test", MD_CALL_POLL },
		{ "MPI_Reduce", MD_CALL_COLL },
		{ "MPI_File_write_all", MD_CALL_COLL },
		{ "MPI_Neighbor_allgather", MD_CALL_NEIGHBOR },
		{ "MPI_Neighbor_alltoallw", MD_CALL_NEIGHBOR },
		{ "MPI_Comm_split", MD_CALL_CREATE },
		{ "MPI_Win_free", MD_CALL_CREATE },
		{ "MPI_File_open", MD_CALL_CREATE },
		{ "MPI_Win_fence", MD_CALL_RMA_FENCE },
		{ "MPI_Win_unlock", MD_CALL_RMA_SYNC },
		{ "MPI_Finalize", MD_CALL_FINALIZE },
		{ "MPI_Ibarrier", MD_CALL_NONBLOCKING },
		{ "MPI_Start", MD_CALL_NONBLOCKING },
		{ "MPIX_Query_cuda_support", MD_CALL_NONBLOCKING },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_eq(md_call_class(want[i].name), want[i].cls,
			     "%s: %s", want[i].name,
			     md_call_class_text(md_call_class(want[i].name)));
	cr_expect_eq(md_call_class(NULL), MD_CALL_NONE);
	cr_expect(md_call_blocks(MD_CALL_NEIGHBOR));
	cr_expect(!md_call_blocks(MD_CALL_POLL));
}

/* Collector and analyzer read the same table: they cannot disagree. */
Test(mpicall, collector_and_analyzer_agree_on_every_call)
{
	for (int i = 0; i < md_ncalls; i++) {
		const char *n = md_calls[i].name;
		enum md_call_class cls = anl_call_class(n);

		cr_expect_eq(mc_is_blocking(n), md_call_blocks(cls), "%s", n);
		cr_expect_eq(mc_is_collective(n), md_call_collective(cls),
			     "%s", n);
		/* Every polling call stands for a blocking one. */
		if (cls == MD_CALL_POLL)
			cr_expect(md_call_blocks(anl_poll_class(n)), "%s", n);
	}
}

/* The names the collector gives Open MPI internals are in the table. */
Test(mpicall, calls_named_from_open_mpi_internals_are_in_the_table)
{
	static const char *const funcs[] = {
		"ompi_mpi_finalize", "mca_pml_ob1_recv", "mca_pml_ob1_probe",
		"mca_pml_ob1_mprobe", "ompi_request_default_wait_some",
		"ompi_comm_split_type", "ompi_coll_base_reduce_scatter_block_"
		"intra_basic_linear", "ompi_osc_rdma_fence_atomic",
		"mca_coll_basic_neighbor_allgather", "ompi_coll_base_exscan_intra_linear",
	};
	char buf[MC_CALL_MAX];

	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (!mc_call_name(funcs[i], buf, sizeof(buf)))
			continue;
		cr_expect(in_table(buf), "%s -> %s", funcs[i], buf);
	}
	cr_expect(mc_call_name("mca_coll_basic_neighbor_allgather", buf,
			       sizeof(buf)));
	cr_expect_str_eq(buf, "MPI_Neighbor_allgather");
	cr_expect(!mc_call_name("ompi_coll_libnbc_ineighbor_allgather", buf,
				sizeof(buf)));
}

/* md_call_class remembers names by address: the same buffer holding
 * another name later gets that name's class, not the remembered one. */
Test(mpicall, a_reused_name_buffer_gets_the_new_names_class)
{
	char name[32];

	strcpy(name, "MPI_Recv");
	cr_assert_eq(md_call_class(name), MD_CALL_RECV);
	cr_assert_eq(md_call_class(name), MD_CALL_RECV);
	strcpy(name, "MPI_Barrier");
	cr_assert_eq(md_call_class(name), MD_CALL_COLL);
	strcpy(name, "MPIX_Whatever");
	cr_assert_eq(md_call_class(name), MD_CALL_NONBLOCKING);
	strcpy(name, "MPI_Recv");
	cr_assert_eq(md_call_class(name), MD_CALL_RECV);
}
