/*
 * mpicalls.c - MPI calls from stack frames (see mpicalls.h).
 */
#include "mpicalls.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "mpicall.h"

/* Open MPI internals that stand for a call by their exact name. */
static const struct {
	const char *func;
	const char *call;
} mc_internal[] = {
	/* PMPI_Finalize tail-calls it: the entry is not on the stack. */
	{ "ompi_mpi_finalize", "MPI_Finalize" },
	{ "ompi_mpi_init", "MPI_Init" },
	{ "mca_pml_ob1_recv", "MPI_Recv" },
	{ "mca_pml_ob1_send", "MPI_Send" },
	{ "mca_pml_ob1_probe", "MPI_Probe" },
	{ "mca_pml_ob1_mprobe", "MPI_Mprobe" },
	{ "mca_pml_ob1_mrecv", "MPI_Mrecv" },
	{ "mca_pml_ucx_recv", "MPI_Recv" },
	{ "mca_pml_ucx_send", "MPI_Send" },
	{ "ompi_request_default_wait", "MPI_Wait" },
	{ "ompi_request_default_wait_all", "MPI_Waitall" },
	{ "ompi_request_default_wait_any", "MPI_Waitany" },
	{ "ompi_request_default_wait_some", "MPI_Waitsome" },
	{ "ompi_comm_split", "MPI_Comm_split" },
	{ "ompi_comm_split_type", "MPI_Comm_split_type" },
	{ "ompi_comm_dup", "MPI_Comm_dup" },
	{ "ompi_comm_create", "MPI_Comm_create" },
	/* PMPI_Buffer_detach ends in a tail call to it. */
	{ "mca_pml_base_bsend_detach", "MPI_Buffer_detach" },
};

/*
 * Collective algorithms of coll/base, tuned, basic, libnbc..., named
 * <prefix>_<collective>_<variant>: longer names first so that
 * "_reduce_scatter_" is not taken for "_reduce_".
 */
static const struct {
	const char *word;
	const char *call;
} mc_coll_words[] = {
	{ "_neighbor_allgatherv", "MPI_Neighbor_allgatherv" },
	{ "_neighbor_allgather", "MPI_Neighbor_allgather" },
	{ "_neighbor_alltoallv", "MPI_Neighbor_alltoallv" },
	{ "_neighbor_alltoallw", "MPI_Neighbor_alltoallw" },
	{ "_neighbor_alltoall", "MPI_Neighbor_alltoall" },
	{ "_reduce_scatter_block", "MPI_Reduce_scatter_block" },
	{ "_reduce_scatter", "MPI_Reduce_scatter" },
	{ "_allreduce", "MPI_Allreduce" },
	{ "_reduce", "MPI_Reduce" },
	{ "_allgatherv", "MPI_Allgatherv" },
	{ "_allgather", "MPI_Allgather" },
	{ "_gatherv", "MPI_Gatherv" },
	{ "_gather", "MPI_Gather" },
	{ "_alltoallw", "MPI_Alltoallw" },
	{ "_alltoallv", "MPI_Alltoallv" },
	{ "_alltoall", "MPI_Alltoall" },
	{ "_scatterv", "MPI_Scatterv" },
	{ "_scatter", "MPI_Scatter" },
	{ "_exscan", "MPI_Exscan" },
	{ "_scan", "MPI_Scan" },
	{ "_barrier", "MPI_Barrier" },
	{ "_bcast", "MPI_Bcast" },
	{ "_fence", "MPI_Win_fence" },
};

/* Helper threads of the runtime: their loops, by function name. */
static const char *const mc_helper_funcs[] = {
	"progress_engine", "opal_progress_threads", "pmix_progress_threads",
	"listen_thread", "listen_thread_fn", "event_base_loop",
	"opal_libevent2022_event_base_loop", "pmix_ptl_base_listen_thread",
	"mca_oob_tcp_listen_thread", "orte_progress_thread_engine",
	"opal_progress_thread_engine", "ompi_btl_openib_async_thread",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

/* Both from the one table of MPI calls (include/mpicall.h). */
bool mc_is_blocking(const char *call)
{
	return md_call_blocks(md_call_class(call));
}

bool mc_is_collective(const char *call)
{
	return md_call_collective(md_call_class(call));
}

/* The suffixes of a binding of the same call: Fortran 2008's
 * (mpi_recv_f08_, MPICH's mpi_recv_f08ts_) and MPI 4's large counts
 * (MPI_Send_c, mpi_send_f08ts_large_). */
static const char *const binding_suffixes[] = {
	"_large", "_f08ts", "_f08", "_c",
};

static void drop_binding_suffixes(char *name, size_t n)
{
	size_t ns = sizeof(binding_suffixes) / sizeof(*binding_suffixes);

	for (size_t i = 0; i < ns; i++) {
		size_t sl = strlen(binding_suffixes[i]);

		/* "MPI_" and one letter at least stay. */
		if (n > 5 + sl && !strcmp(name + n - sl, binding_suffixes[i])) {
			n -= sl;
			name[n] = '\0';
		}
	}
}

/* "MPI_Comm_split" from the letters after a [P]MPI_ or [p]mpi_ prefix:
 * the first letter upper case, the rest lower case, trailing '_' of
 * Fortran bindings dropped, and the suffix of another binding of the
 * same call. */
static bool api_name(const char *func, char *buf, size_t len)
{
	const char *p;
	size_t n = 0;

	if (!strncmp(func, "PMPI_", 5) || !strncmp(func, "pmpi_", 5))
		p = func + 5;
	else if (!strncmp(func, "MPI_", 4) || !strncmp(func, "mpi_", 4))
		p = func + 4;
	else
		return false;
	if (!isalpha((unsigned char)p[0]) || len < 8)
		return false;
	n = (size_t)snprintf(buf, len, "MPI_");
	for (size_t i = 0; p[i] && n + 1 < len; i++) {
		char c = p[i];

		if (c == '_' && (p[i + 1] == '_' || p[i + 1] == '\0'))
			break;
		buf[n++] = (char)(i == 0 ? toupper((unsigned char)c)
					 : tolower((unsigned char)c));
	}
	buf[n] = '\0';
	drop_binding_suffixes(buf, n);
	return true;
}

/* word must end at '_' or at the end of the name. */
static bool has_word(const char *s, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
		if (p[wl] == '_' || p[wl] == '\0')
			return true;
	return false;
}

/* MPICH 4's bindings: PMPI_Waitany ends in a tail call to its static
 * internal_Waitany, so PMPI_Waitany's frame is not on the stack (and
 * internal_Send_c is MPI_Send_c's).  mc_classify takes the name only in
 * the MPI library. */
static bool mpich_binding_name(const char *func, char *buf, size_t len)
{
	char name[MC_CALL_MAX];
	size_t n;

	if (strncmp(func, "internal_", 9))
		return false;
	n = (size_t)snprintf(name, sizeof(name), "MPI_%s", func + 9);
	if (n >= sizeof(name))
		return false;
	drop_binding_suffixes(name, n);
	if (!md_call_known(name))
		return false;
	snprintf(buf, len, "%s", name);
	return true;
}

static bool internal_name(const char *func, char *buf, size_t len)
{
	size_t n = sizeof(mc_internal) / sizeof(*mc_internal);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(func, mc_internal[i].func)) {
			snprintf(buf, len, "%s", mc_internal[i].call);
			return true;
		}
	}
	if (mpich_binding_name(func, buf, len))
		return true;
	if (strncmp(func, "ompi_coll_", 10) && strncmp(func, "mca_coll_", 9) &&
	    strncmp(func, "ompi_osc_", 9))
		return false;
	/* libnbc's nonblocking neighbour collectives are not the blocking
	 * ones, and "_allgather" would match inside them. */
	if (strstr(func, "_ineighbor_"))
		return false;
	n = sizeof(mc_coll_words) / sizeof(*mc_coll_words);
	for (size_t i = 0; i < n; i++) {
		if (has_word(func, mc_coll_words[i].word)) {
			snprintf(buf, len, "%s", mc_coll_words[i].call);
			return true;
		}
	}
	return false;
}

bool mc_call_name(const char *func, char *buf, size_t len)
{
	if (!func || !len)
		return false;
	return api_name(func, buf, len) || internal_name(func, buf, len);
}

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool in_prefixes(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (prefix(s, list[i]))
			return true;
	return false;
}

/* The MPI runtime's own objects (and the libraries it brings). */
static bool is_mpi_object(const char *path)
{
	static const char *const libs[] = {
		"libmpi.so", "libmpi_", "libopen-pal.so", "libopen-rte.so",
		"libpmix.so", "libevent", "libhwloc.so", "libucp.so",
		"libucs.so", "libuct.so", "libfabric.so", "mca_",
		"libmca_common_", "libprrte.so", "libpmi", "libmpich",
	};

	return in_prefixes(base_name(path), libs, sizeof(libs) / sizeof(*libs));
}

bool mc_is_runtime_object(const char *path)
{
	static const char *const sys[] = {
		"libc.so", "libpthread.so", "ld-linux", "libgcc_s.so", "[vdso]",
		"libasan.so", "libtsan.so", "libubsan.so",
	};

	if (!path)
		return false;
	return is_mpi_object(path) ||
	       in_prefixes(base_name(path), sys, sizeof(sys) / sizeof(*sys));
}

/* Without an object path, judge by the name's namespace. */
static bool is_runtime_frame(const struct snap_frame *f)
{
	static const char *const ns[] = { "ompi_", "opal_", "orte_", "mca_",
					  "pmix_", "PMPI_", "MPI_", "event_" };

	/* Sanitizer builds (common in CI) wrap libc calls in interceptors
	 * linked into the executable: they are libc, not the user. */
	if (f->func && (prefix(f->func, "__interceptor_") ||
			prefix(f->func, "___interceptor_") ||
			prefix(f->func, "__sanitizer_")))
		return true;
	if (f->object)
		return mc_is_runtime_object(f->object);
	if (!f->func)
		return true;	/* nothing known: not a call site to show */
	for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++)
		if (prefix(f->func, ns[i]))
			return true;
	return false;
}

static bool is_helper(const struct snap_frame *frames, int n, bool in_call)
{
	bool helper_func = false, runtime_only = true, any_mpi_lib = false;

	for (int i = 0; i < n; i++) {
		const char *fn = frames[i].func;

		if (fn && (!strcmp(fn, "main") ||
			   !strcmp(fn, "__libc_start_main") ||
			   !strcmp(fn, "__libc_start_call_main")))
			return false;
		if (fn && in_list(fn, mc_helper_funcs,
				  sizeof(mc_helper_funcs) /
					  sizeof(*mc_helper_funcs)))
			helper_func = true;
		if (!is_runtime_frame(&frames[i]))
			runtime_only = false;
		else if (frames[i].object && is_mpi_object(frames[i].object))
			any_mpi_lib = true;
	}
	/* A thread born in the runtime that never leaves it, e.g. a
	 * libevent loop whose names we do not know; but a stack cut short
	 * inside an MPI call is the application's. */
	return helper_func ||
	       (n > 0 && runtime_only && any_mpi_lib && !in_call);
}

/*
 * A thread in an MPI call that runs code of the object that made the
 * call, called back by the library (a user-defined MPI_Op inside
 * MPI_Allreduce, an error handler, a generalized request's query): it
 * computes, it does not wait.  Shown where it runs, as outside MPI.  The
 * object must be the caller's own: transport libraries the runtime list
 * does not know must not make a blocked rank look busy.  A callback that
 * itself calls MPI (frames inner to it name an MPI call) is left as it
 * is.
 */
static bool is_callers_code(const struct snap_frame *f, const char *obj)
{
	/* An MPI linked into the program statically has its functions in
	 * the caller's object: known by their names. */
	static const char *const mpi_ns[] = {
		"ompi_", "opal_", "orte_", "mca_", "pmix_", "PMPI_", "MPI_",
		"pmpi_", "mpi_", "event_", "MPIR_", "MPID", "MPII_", "MPIU_",
		"MPL_", "PMI", "ucp_", "uct_", "ucs_", "fi_", "hwloc_", "psm",
		"ADIO",
	};

	/* And its C library, when that is static too: glibc's internal
	 * names and the calls a progress loop waits in. */
	static const char *const libc_ns[] = { "__", "pthread_", "sem_" };
	static const char *const libc_calls[] = {
		"poll", "ppoll", "select", "pselect", "epoll_wait",
		"epoll_pwait", "sched_yield", "nanosleep", "clock_nanosleep",
		"usleep", "sleep", "read", "write", "recv", "recvmsg", "send",
		"sendmsg", "syscall", "ioctl", "futex", "_start",
	};

	return f->object && f->func && !strcmp(f->object, obj) &&
	       !is_runtime_frame(f) &&
	       !in_prefixes(f->func, mpi_ns,
			    sizeof(mpi_ns) / sizeof(*mpi_ns)) &&
	       !in_prefixes(f->func, libc_ns,
			    sizeof(libc_ns) / sizeof(*libc_ns)) &&
	       !in_list(f->func, libc_calls,
			sizeof(libc_calls) / sizeof(*libc_calls));
}

static bool in_callback(const struct snap_frame *frames, struct mc_class *out)
{
	const char *obj;
	char name[MC_CALL_MAX];
	int cb = -1;

	if (out->mpi_frame <= 0 || out->user_frame < 0)
		return false;
	obj = frames[out->user_frame].object;
	/* An MPI linked into the caller's object: its inner frames are all
	 * the caller's, and no name tells a callback from the library. */
	if (!obj || (frames[out->mpi_frame].object &&
		     !strcmp(frames[out->mpi_frame].object, obj)))
		return false;
	for (int i = out->mpi_frame - 1; i >= 0 && cb < 0; i--)
		if (is_callers_code(&frames[i], obj))
			cb = i;
	if (cb < 0)
		return false;
	for (int i = 0; i < cb; i++)
		if (mc_call_name(frames[i].func, name, sizeof(name)))
			return false;
	/* Where it computes: the innermost frame of the caller's object. */
	for (int i = 0; i < cb; i++)
		if (is_callers_code(&frames[i], obj)) {
			cb = i;
			break;
		}
	memcpy(out->called_back_by, out->call, sizeof(out->call));
	out->call[0] = '\0';
	out->mpi_frame = -1;
	out->user_frame = cb;
	out->progress_thread = false;
	return true;
}

void mc_classify(const struct snap_frame *frames, int n, struct mc_class *out)
{
	char name[MC_CALL_MAX];

	memset(out, 0, sizeof(*out));
	out->mpi_frame = -1;
	out->user_frame = -1;
	/* The outermost entry is the call the user made; inner ones are
	 * its implementation (a barrier waiting in wait_all). */
	for (int i = n - 1; i >= 0; i--) {
		/* A program's own internal_Send is not MPICH's. */
		if (frames[i].func && frames[i].object &&
		    !strncmp(frames[i].func, "internal_", 9) &&
		    !is_mpi_object(frames[i].object))
			continue;
		if (mc_call_name(frames[i].func, name, sizeof(name))) {
			snprintf(out->call, sizeof(out->call), "%s", name);
			out->mpi_frame = i;
			break;
		}
	}
	for (int i = out->mpi_frame + 1; i < n; i++) {
		if (!is_runtime_frame(&frames[i])) {
			out->user_frame = i;
			break;
		}
	}
	if (in_callback(frames, out))
		return;
	out->progress_thread = is_helper(frames, n, out->mpi_frame >= 0);
	if (out->progress_thread) {
		out->call[0] = '\0';
		out->mpi_frame = -1;
	}
}
