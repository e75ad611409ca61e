/*
 * mpicalls_test.c - MPI calls, user frames and helper threads from frame
 * lists.  The lists are stacks seen on Debian's Open MPI 4.1.4 (stripped
 * libmpi: names from .dynsym) with collector/stacks.c on samples/ jobs
 * (nosender, collmismatch, threads), innermost first.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../collector/mpicalls.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBMPI "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.4"
#define PAL "/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.2"
#define MCA "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/"
#define EVENT "/usr/lib/x86_64-linux-gnu/libevent_core-2.1.so.7.0.1"
#define PMIX "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2.6.2"
#define APP "/tmp/h2dbg/app"

struct fr {
	const char *func, *object;
};

static void classify(const struct fr *in, int n, struct mc_class *out)
{
	struct snap_frame f[32];

	memset(f, 0, sizeof(f));
	for (int i = 0; i < n; i++) {
		f[i].func = in[i].func;
		f[i].object = in[i].object;
	}
	mc_classify(f, n, out);
}

#define N(a) ((int)(sizeof(a) / sizeof(*(a))))

Test(mpicalls, recv_in_ob1_is_mpi_recv_called_from_main)
{
	static const struct fr st[] = {
		{ "__sched_yield", LIBC },
		{ "mca_pml_ob1_recv", MCA "mca_pml_ob1.so" },
		{ "MPI_Recv", LIBMPI },
		{ "main", APP },
		{ "__libc_init_first", LIBC },
		{ "__libc_start_main", LIBC },
		{ "_start", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Recv");
	cr_expect_eq(c.mpi_frame, 2);
	cr_expect_eq(c.user_frame, 3);
	cr_expect(!c.progress_thread);
}

/* MPICH 4's PMPI_Waitany ends in a tail call to its static
 * internal_Waitany: the call is that frame's, in the MPI library only; a
 * program's own internal_Send is the program's code. */
Test(mpicalls, mpichs_internal_binding_frame_is_the_call_in_libmpi_only)
{
	static const struct fr st[] = {
		{ "__poll", LIBC },
		{ "MPIR_Waitany_impl", "/opt/mpich/lib/libmpi.so.12" },
		{ "internal_Waitany", "/opt/mpich/lib/libmpi.so.12" },
		{ "main", APP },
	};
	static const struct fr own[] = {
		{ "__nanosleep", LIBC },
		{ "internal_Send", APP },
		{ "main", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Waitany");
	cr_expect_eq(c.mpi_frame, 2);
	cr_expect_eq(c.user_frame, 3);
	classify(own, N(own), &c);
	cr_expect_str_eq(c.call, "");
	cr_expect_eq(c.mpi_frame, -1);
	cr_expect_eq(c.user_frame, 1);
}

Test(mpicalls, finalize_without_pmpi_entry_is_found_from_ompi_mpi_finalize)
{
	static const struct fr st[] = {
		{ "clock_nanosleep", LIBC },
		{ "__nanosleep", LIBC },
		{ "usleep", LIBC },
		{ "ompi_mpi_finalize", LIBMPI },
		{ "main", APP },
		{ "__libc_start_main", LIBC },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Finalize");
	cr_expect_eq(c.mpi_frame, 3);
	cr_expect_eq(c.user_frame, 4);
}

Test(mpicalls, barrier_is_outermost_entry_not_its_inner_wait_all)
{
	static const struct fr st[] = {
		{ "__GI_sched_yield", LIBC },
		{ "ompi_request_default_wait_all", LIBMPI },
		{ "ompi_coll_base_barrier_intra_basic_linear", LIBMPI },
		{ "MPI_Barrier", LIBMPI },
		{ "main", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Barrier");
	cr_expect_eq(c.mpi_frame, 3);
	cr_expect_eq(c.user_frame, 4);
}

Test(mpicalls, bcast_internals_name_the_call_when_the_entry_is_missing)
{
	/* The MPI_Bcast frame cut off (frame cap, or a broken unwind). */
	static const struct fr st[] = {
		{ "__GI_sched_yield", LIBC },
		{ "ompi_request_default_wait", LIBMPI },
		{ "ompi_coll_base_bcast_intra_generic", LIBMPI },
		{ "ompi_coll_base_bcast_intra_bintree", LIBMPI },
		{ "ompi_coll_tuned_bcast_intra_dec_fixed",
		  MCA "mca_coll_tuned.so" },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Bcast");
	cr_expect_eq(c.mpi_frame, 4);
	cr_expect_eq(c.user_frame, -1);
}

Test(mpicalls, recv_in_a_user_thread_is_the_application_not_a_helper)
{
	static const struct fr st[] = {
		{ "mca_btl_vader_poll_handle_frag", MCA "mca_btl_vader.so" },
		{ "opal_progress", PAL },
		{ "ompi_sync_wait_mt", PAL },
		{ "mca_pml_ob1_recv", MCA "mca_pml_ob1.so" },
		{ "MPI_Recv", LIBMPI },
		{ "second_receiver", APP },
		{ "pthread_condattr_setpshared", LIBC },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Recv");
	cr_expect_eq(c.user_frame, 5);
	cr_expect(!c.progress_thread);
}

Test(mpicalls, opal_and_pmix_event_loops_are_helper_threads)
{
	/* libopen-pal's progress engine shows under the nearest exported
	 * name of a stripped library. */
	static const struct fr opal[] = {
		{ "__poll", LIBC },
		{ "event_strlcpy_", EVENT },
		{ "event_base_loop", EVENT },
		{ "opal_info_show_opal_version", PAL },
		{ "pthread_condattr_setpshared", LIBC },
		{ "__xmknodat", LIBC },
	};
	static const struct fr pmix[] = {
		{ "epoll_wait", LIBC },
		{ "event_strlcpy_", EVENT },
		{ "pmix_deregister_params", PMIX },
		{ "start_thread", LIBC },
		{ "clone3", LIBC },
	};
	struct mc_class c;

	classify(opal, N(opal), &c);
	cr_expect(c.progress_thread);
	cr_expect_str_empty(c.call);
	cr_expect_eq(c.mpi_frame, -1);
	classify(pmix, N(pmix), &c);
	cr_expect(c.progress_thread, "a loop inside libpmix only");
}

Test(mpicalls, thread_outside_mpi_has_user_frame_and_no_call)
{
	static const struct fr st[] = {
		{ "read", LIBC },
		{ "compute_step", APP },
		{ "main", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_empty(c.call);
	cr_expect_eq(c.mpi_frame, -1);
	cr_expect_eq(c.user_frame, 1);
	cr_expect(!c.progress_thread);
}

Test(mpicalls, init_is_found_from_ompi_mpi_init)
{
	static const struct fr st[] = {
		{ "usleep", LIBC },
		{ "ompi_mpi_init", LIBMPI },
		{ "PMPI_Init", LIBMPI },
		{ "main", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Init");
	cr_expect_eq(c.mpi_frame, 2);
}

Test(mpicalls, frames_without_names_or_objects_are_skipped)
{
	static const struct fr st[] = {
		{ NULL, NULL },
		{ "PMPI_Wait", NULL },
		{ NULL, NULL },
		{ "solver", NULL },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "MPI_Wait");
	cr_expect_eq(c.mpi_frame, 1);
	cr_expect_eq(c.user_frame, 3);
	classify(st, 0, &c);
	cr_expect_str_empty(c.call);
	cr_expect(!c.progress_thread);
}

Test(mpicalls, call_names_are_canonical_from_c_fortran_and_internals)
{
	static const struct {
		const char *func, *call;
	} cases[] = {
		{ "PMPI_Recv", "MPI_Recv" },
		{ "MPI_Sendrecv_replace", "MPI_Sendrecv_replace" },
		{ "pmpi_waitall__", "MPI_Waitall" },
		{ "mpi_comm_split_", "MPI_Comm_split" },
		{ "ompi_request_default_wait_any", "MPI_Waitany" },
		{ "ompi_request_default_wait_some", "MPI_Waitsome" },
		{ "ompi_coll_base_allreduce_intra_recursivedoubling",
		  "MPI_Allreduce" },
		{ "ompi_coll_base_reduce_generic", "MPI_Reduce" },
		{ "ompi_coll_base_reduce_scatter_intra_ring",
		  "MPI_Reduce_scatter" },
		{ "mca_coll_basic_gatherv_intra", "MPI_Gatherv" },
		{ "ompi_coll_base_alltoall_intra_pairwise", "MPI_Alltoall" },
		{ "ompi_coll_base_allgather_intra_ring", "MPI_Allgather" },
		{ "ompi_coll_base_scatter_intra_binomial", "MPI_Scatter" },
		{ "mca_pml_ob1_probe", "MPI_Probe" },
		{ "ompi_comm_dup", "MPI_Comm_dup" },
		/* Fortran 2008 and large-count bindings of the same call. */
		{ "mpi_recv_f08_", "MPI_Recv" },
		{ "pmpi_sendrecv_f08_", "MPI_Sendrecv" },
		{ "mpi_recv_f08ts_", "MPI_Recv" },
		{ "mpi_send_f08ts_large_", "MPI_Send" },
		{ "MPI_Send_c", "MPI_Send" },
		{ "PMPI_Allreduce_c", "MPI_Allreduce" },
		{ "MPI_Comm_c2f", "MPI_Comm_c2f" },
		/* Where the binding ends in a tail call, its frame is
		 * gone: MPICH 4's internal_<call>, Open MPI's bsend
		 * detach. */
		{ "internal_Waitany", "MPI_Waitany" },
		{ "internal_Waitsome", "MPI_Waitsome" },
		{ "internal_Comm_split", "MPI_Comm_split" },
		{ "internal_Send_c", "MPI_Send" },
		{ "mca_pml_base_bsend_detach", "MPI_Buffer_detach" },
	};
	char buf[MC_CALL_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		cr_expect(mc_call_name(cases[i].func, buf, sizeof(buf)), "%s",
			  cases[i].func);
		cr_expect_str_eq(buf, cases[i].call, "%s", cases[i].func);
	}
	cr_expect(!mc_call_name("main", buf, sizeof(buf)));
	cr_expect(!mc_call_name("opal_progress", buf, sizeof(buf)));
	cr_expect(!mc_call_name("ompi_coll_base_iallreduce_x", buf,
				sizeof(buf)) ||
		  strcmp(buf, "MPI_Allreduce"));
	cr_expect(!mc_call_name("MPI_", buf, sizeof(buf)));
	cr_expect(!mc_call_name("internal_helper", buf, sizeof(buf)));
	cr_expect(!mc_call_name("internal_", buf, sizeof(buf)));
	cr_expect(!mc_call_name(NULL, buf, sizeof(buf)));
}

Test(mpicalls, blocking_and_collective_tables)
{
	const char *blocking[] = { "MPI_Recv", "MPI_Send", "MPI_Ssend",
				   "MPI_Sendrecv", "MPI_Waitall",
				   "MPI_Waitany", "MPI_Probe", "MPI_Barrier",
				   "MPI_Allreduce", "MPI_Finalize",
				   "MPI_Comm_split", "MPI_Win_fence" };
	const char *nonblocking[] = { "MPI_Isend", "MPI_Irecv", "MPI_Test",
				      "MPI_Bsend", "MPI_Ibarrier",
				      "MPI_Comm_rank", "MPI_Wtime" };

	for (size_t i = 0; i < sizeof(blocking) / sizeof(*blocking); i++)
		cr_expect(mc_is_blocking(blocking[i]), "%s", blocking[i]);
	for (size_t i = 0; i < sizeof(nonblocking) / sizeof(*nonblocking); i++)
		cr_expect(!mc_is_blocking(nonblocking[i]), "%s",
			  nonblocking[i]);
	cr_expect(mc_is_collective("MPI_Bcast"));
	cr_expect(mc_is_collective("MPI_Finalize"));
	cr_expect(!mc_is_collective("MPI_Recv"));
	cr_expect(!mc_is_collective("MPI_Waitall"));
	cr_expect(!mc_is_blocking(NULL));
}

Test(mpicalls, runtime_objects_are_mpi_and_system_libraries)
{
	cr_expect(mc_is_runtime_object(LIBMPI));
	cr_expect(mc_is_runtime_object(PAL));
	cr_expect(mc_is_runtime_object(MCA "mca_pml_ob1.so"));
	cr_expect(mc_is_runtime_object(PMIX));
	cr_expect(mc_is_runtime_object(LIBC));
	cr_expect(mc_is_runtime_object("[vdso]"));
	cr_expect(!mc_is_runtime_object(APP));
	cr_expect(!mc_is_runtime_object("/usr/lib/libmpiuser.so"));
	/* Debian's MPICH. */
	cr_expect(mc_is_runtime_object("/usr/lib/x86_64-linux-gnu/"
				       "libmpich.so.12"));
	cr_expect(!mc_is_runtime_object(NULL));
}

Test(mpicalls, sanitizer_interceptors_are_not_the_user_call_site)
{
	static const struct fr st[] = {
		{ "read", LIBC },
		{ "__interceptor_read", APP },
		{ "wait_for_input", APP },
		{ "main", APP },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_eq(c.user_frame, 2);
	cr_expect(mc_is_runtime_object("/usr/lib/x86_64-linux-gnu/libasan.so.8"));
}

/* A user-defined MPI_Op running inside MPI_Allreduce computes: the thread
 * is shown where it runs, as outside MPI, not as waiting in the call. */
Test(mpicalls, user_op_called_back_inside_a_collective_is_running_code)
{
	static const struct fr st[] = {
		{ "slow_sum", APP },
		{ "ompi_op_base_2buff_user", LIBMPI },
		{ "ompi_coll_base_allreduce_intra_recursivedoubling", LIBMPI },
		{ "PMPI_Allreduce", LIBMPI },
		{ "main", APP },
		{ "__libc_start_main", LIBC },
	};
	struct mc_class c;

	classify(st, N(st), &c);
	cr_expect_str_eq(c.call, "");
	cr_expect_str_eq(c.called_back_by, "MPI_Allreduce");
	cr_expect_eq(c.mpi_frame, -1);
	cr_expect_eq(c.user_frame, 0);
	cr_expect(!c.progress_thread);
}

/* Not a callback: the code inner to the call is the runtime's (a
 * transport library the list does not know is not the caller's object),
 * or an MPI linked statically into the program, or a callback that
 * itself waits in MPI. */
Test(mpicalls, only_the_callers_own_code_inside_a_call_is_a_callback)
{
	static const struct fr transport[] = {
		{ "mlx5_poll_cq", "/usr/lib/x86_64-linux-gnu/libmlx5.so.1" },
		{ "MPI_Recv", LIBMPI },
		{ "main", APP },
	};
	static const struct fr statik[] = {
		{ "__GI___poll", APP },
		{ "sched_yield", APP },
		{ "MPIDI_CH3I_Progress", APP },
		{ "MPIR_Wait_impl", APP },
		{ "MPI_Recv", APP },
		{ "main", APP },
	};
	static const struct fr statik2[] = {
		{ "MPIC_Wait", APP },
		{ "MPIC_Sendrecv", APP },
		{ "MPIR_Allreduce_intra_auto", APP },
		{ "PMPI_Allreduce", APP },
		{ "main", APP },
	};
	static const struct fr waits[] = {
		{ "poll", LIBC },
		{ "PMPI_Recv", LIBMPI },
		{ "bad_op", APP },
		{ "ompi_op_base_2buff_user", LIBMPI },
		{ "PMPI_Allreduce", LIBMPI },
		{ "main", APP },
	};
	struct mc_class c;

	classify(transport, N(transport), &c);
	cr_expect_str_eq(c.call, "MPI_Recv");
	cr_expect_eq(c.user_frame, 2);
	classify(statik, N(statik), &c);
	cr_expect_str_eq(c.call, "MPI_Recv");
	cr_expect_eq(c.user_frame, 5);
	classify(statik2, N(statik2), &c);
	cr_expect_str_eq(c.call, "MPI_Allreduce");
	cr_expect_eq(c.user_frame, 4);
	classify(waits, N(waits), &c);
	cr_expect_str_eq(c.called_back_by, "");
	cr_expect_str_eq(c.call, "MPI_Allreduce");
	cr_expect_eq(c.mpi_frame, 4);
}
