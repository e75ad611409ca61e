/*
 * mqdhost.h - host the MPI library's message-queue DLL (MQD) and run its
 * protocol for one process at a time.
 *
 * The host knows nothing of ptrace, ELF or DWARF: what the DLL asks of an
 * image (types) and of a process (memory, symbols) is answered through
 * the two small ops tables below, implemented over the live target by
 * collect.c and over fakes by the tests.
 */
#ifndef MD_MQDHOST_H
#define MD_MQDHOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "snap.h"

/* Types of the MPI library (from its DWARF): handles are opaque. */
struct mh_types_ops {
	/* 0 and *type, or a negative code when the type is unknown. */
	int (*find)(void *ctx, const char *name, void **type);
	int (*size)(void *ctx, void *type);		/* bytes, < 0 unknown */
	int (*offset)(void *ctx, void *type, const char *field); /* < 0 */
};

/* One process of the job. */
struct mh_proc_ops {
	/* Read len bytes at addr: 0 or a negative code, quietly. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Runtime address of a symbol in the process's loaded objects, in
	 * dynamic-linker order: 0 or a negative code.  addr may be NULL. */
	int (*lookup)(void *ctx, const char *name, uint64_t *addr);
	/* The group (size job ranks) of the communicator with unique id id
	 * in which the process has local rank me, from the MPI library's
	 * own structures, for when the DLL's is unusable: 0 or a negative
	 * code.  May be NULL. */
	int (*comm_group)(void *ctx, uint64_t id, int me, int size,
			  int *group);
	/* Whether that communicator is an intercommunicator, and then its
	 * remote group (*remote allocated, *rsize ranks of the job), which
	 * the DLL does not give: 1, 2 (processes outside the job: *rsize of
	 * them, *remote NULL), 0 (an intracommunicator) or a negative
	 * code.  May be NULL. */
	int (*comm_remote)(void *ctx, uint64_t id, int me, int size,
			   int **remote, int *rsize);
};

struct mh_dll;
struct mh_image;

/* The MPI implementation a DLL belongs to: its callbacks differ (type
 * sizes, what it leaves to the host; doc/mpich.md). */
enum mh_impl {
	MH_IMPL_UNKNOWN,
	MH_IMPL_OMPI,
	MH_IMPL_MPICH,
};

/*
 * The implementation of a DLL from its version string ("MPICH message
 * queue support for MPICH 4.0.2 ...", "Open MPI ...") and, failing that,
 * its file name (libtvmpich.so, libompi_dbg_msgq.so).  Never NULL args.
 */
enum mh_impl mh_impl_guess(const char *version, const char *path);
/* "Open MPI", "MPICH", or NULL for unknown. */
const char *mh_impl_name(enum mh_impl impl);

/*
 * Decide whether the DLL at path may be loaded into this process: a
 * regular file, owned by root or by us, writable by nobody else, in
 * folders writable by nobody else (sticky folders aside).  explicit_choice
 * (--dll) keeps only the regular-file check.  Returns 0, or -MD_E_DLL
 * after reporting the reason and the fix.
 */
int mh_dll_check(const char *path, bool explicit_choice);

/*
 * Open the DLL's file once, check the OPEN file (fstat) and its folders
 * as mh_dll_check does, and load that same file through /proc/self/fd:
 * a file swapped at path between the check and the load is not the one
 * loaded.  Then as mh_dll_open.  hooks may be NULL; after_check runs
 * between the check and the load (tests swap the file there).
 */
struct mh_load_hooks {
	void (*after_check)(void *ctx);
	void *ctx;
};
int mh_dll_load(const char *path, bool explicit_choice,
		const struct mh_load_hooks *hooks, struct mh_dll **out);

/*
 * dlopen the DLL once (without the checks of mh_dll_check), check its interface (compatibility level, address
 * width) and hand it the basic callbacks.  Returns 0 and *out, or
 * -MD_E_DLL after reporting.  mh_dll_free releases the host's state; the
 * library itself stays loaded, as the interface requires.
 */
int mh_dll_open(const char *path, struct mh_dll **out);
void mh_dll_free(struct mh_dll *dll);
const char *mh_dll_version(const struct mh_dll *dll);
const char *mh_dll_path(const struct mh_dll *dll);
enum mh_impl mh_dll_impl(const struct mh_dll *dll);

/*
 * Set up an executable image with the DLL: mqs_setup_image and
 * mqs_image_has_queues.  The image's symbol questions are answered in
 * the process given here (the first process of the image).  Returns 0 and
 * *out, or -MD_E_NOTYPES / -MD_E_DLL after reporting with the DLL's
 * message.  A type the DLL asked for and did not get refuses the image
 * even when the DLL says it has queues (MPICH's does, and then reads
 * with offsets of -1).  The image borrows dll and types_ctx: free it
 * before them.
 */
int mh_image_new(struct mh_dll *dll, const char *name,
		 const struct mh_types_ops *types, void *types_ctx,
		 const struct mh_proc_ops *proc, void *proc_ctx,
		 struct mh_image **out);
void mh_image_free(struct mh_image *img);

/*
 * Read one process's communicators and queues into rank r of s (members,
 * ops, queues, unexpected_available): process setup, has_queues, the
 * communicator list refresh, every communicator with its group, pending
 * sends, receives and the unexpected queue.  The process info is set up
 * and destroyed within the call, so every look starts fresh.  A process
 * for which the DLL has no queues gets SNAP_QUEUES_NONE and a reason,
 * and 0 is returned; a negative code only when reading failed
 * (-MD_E_GONE: the process went away).  A peer the DLL gives only as a
 * local rank is placed in MPI_COMM_WORLD through the communicator's
 * group.  With MPICH's DLL the communicator is named by its context id
 * and its group read from the MPI library (mqd_mpich.h), and the
 * lengths, element counts, go to snap_op.count (length stays 0).
 */
int mh_collect(struct mh_image *img, const struct mh_proc_ops *proc,
	       void *proc_ctx, int global_rank, struct snap *s,
	       struct snap_rank *r);

#endif /* MD_MQDHOST_H */
