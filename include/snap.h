/*
 * snap.h - the snapshot: everything collected from one MPI job at one
 * moment.  It is the contract between collector and analyzer and a file
 * format (README, "Snapshot format"): the collector writes it with
 * snap_write(), the analyzer reads it with snap_read().
 *
 * Memory: a snapshot owns everything reachable from it.  Strings are
 * interned in the snapshot (snap_str), so equal strings share storage and
 * a million ranks stuck at one line cost one copy of the file name.
 * Arrays are plain heap arrays owned by their parent and freed by
 * snap_free(), except a read rank's (snap_rank.pooled): the reader puts
 * them in the snapshot's pool, which snap_free() releases whole.
 */
#ifndef MD_SNAP_H
#define MD_SNAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SNAP_FORMAT "mpi-deadlock-snapshot"
#define SNAP_VERSION 1

enum snap_rank_state {
	SNAP_RANK_COLLECTED,	/* stopped and read */
	SNAP_RANK_GONE,		/* exited before or during collection */
	SNAP_RANK_UNREAD,	/* alive but could not be read (reason) */
	SNAP_RANK_REMOTE,	/* on another host: not collected here */
	SNAP_RANK_STATE_LAST = SNAP_RANK_REMOTE,	/* a new value goes above */
};

/* Did the rank's MPI state change between the looks? */
enum snap_progress {
	SNAP_PROGRESS_UNKNOWN,	/* one look only, or rank not read */
	SNAP_PROGRESS_STABLE,	/* the same in every look */
	SNAP_PROGRESS_CHANGED,	/* it moved: the rank is making progress */
	SNAP_PROGRESS_LAST = SNAP_PROGRESS_CHANGED,
};

/* The thread support MPI_Init_thread gave the rank (MPI_THREAD_*). */
enum snap_thread_level {
	SNAP_TL_UNKNOWN,	/* not read */
	SNAP_TL_SINGLE,
	SNAP_TL_FUNNELED,
	SNAP_TL_SERIALIZED,
	SNAP_TL_MULTIPLE,
	SNAP_TL_LAST = SNAP_TL_MULTIPLE,
};

enum snap_op_kind {
	SNAP_OP_SEND,
	SNAP_OP_RECV,
	SNAP_OP_UNEXPECTED,	/* arrived, not yet received */
	SNAP_OP_KIND_LAST = SNAP_OP_UNEXPECTED,
};

/* Where an operation was read from. */
enum snap_op_source {
	SNAP_SRC_DLL,		/* the MPI library's message-queue DLL */
	SNAP_SRC_OB1,		/* Open MPI ob1's matching queues, read
				 * directly (what the DLL hides) */
	SNAP_SRC_LAST = SNAP_SRC_OB1,
};

enum snap_op_status {
	SNAP_ST_PENDING,
	SNAP_ST_MATCHED,
	SNAP_ST_COMPLETE,
	SNAP_ST_LAST = SNAP_ST_COMPLETE,
};

/* Where the DLL's queue information for a rank stands. */
enum snap_queues {
	SNAP_QUEUES_OK,		/* read */
	SNAP_QUEUES_NONE,	/* the DLL had no information (reason) */
};

struct snap_frame {
	uint64_t pc;
	const char *func;	/* NULL if unknown */
	const char *object;	/* path of the loaded object, NULL if unknown */
	const char *file;	/* NULL without line information */
	int line;		/* 0 if unknown */
	/* The frame's stack pointer, 0 if unknown: the collector's, not
	 * written. */
	uint64_t sp;
};

struct snap_thread {
	int tid;
	int nframes;
	struct snap_frame *frames;	/* innermost first */
	/* The MPI call the thread is in, by its standard name ("MPI_Recv",
	 * "MPI_Finalize"), NULL when the thread is not in MPI. */
	const char *mpi_call;
	int mpi_frame;		/* frame of that call, -1 if none */
	int user_frame;		/* first frame outside the MPI library and
				 * outside libc above mpi_frame: the user's
				 * call site; -1 if none */
	bool progress_thread;	/* an MPI runtime helper thread (opal/pmix
				 * progress, poll loops): never the
				 * application */
	/* The MPI call that called the program's code the thread runs (a
	 * user MPI_Op inside "MPI_Allreduce"): it computes, mpi_call is
	 * NULL and user_frame is where.  NULL otherwise. */
	const char *called_back_by;
};

/* A communicator's virtual topology (MPI_Cart_create, MPI_Graph_create,
 * MPI_Dist_graph_create[_adjacent]). */
enum snap_topo {
	SNAP_TOPO_NONE,		/* none, or not read */
	SNAP_TOPO_CART,
	SNAP_TOPO_GRAPH,
	SNAP_TOPO_DIST_GRAPH,
	SNAP_TOPO_LAST = SNAP_TOPO_DIST_GRAPH,
};

/*
 * A communicator, job-wide: the collector merges what the ranks report
 * (same id, same name, same group) into one entry.
 */
struct snap_comm {
	uint64_t id;		/* the DLL's unique_id (Open MPI: context id,
				 * not unique across a split) */
	const char *name;	/* "" if unnamed */
	int size;
	int *group;		/* size global ranks, local rank order; NULL
				 * if the DLL could not give the group.  A
				 * shared array (snap_group_new): snapshots
				 * of one job may hold the same one. */
	/* The topology, for neighbour collectives: the neighbours (local
	 * ranks, sources and destinations together) of local rank i are
	 * nbr[nbr_first[i] .. nbr_first[i + 1]).  nbr_first has size + 1
	 * entries; both NULL when topo is SNAP_TOPO_NONE. */
	int topo;		/* enum snap_topo */
	int *nbr_first;
	int *nbr;
	/* An intercommunicator's remote group (global ranks, remote_size of
	 * them): a point-to-point peer is a rank of it, and a collective
	 * has both groups.  NULL for an intracommunicator, or when the
	 * collector could not tell; NULL with a remote_size when the remote
	 * group is processes outside the job (MPI_Comm_spawn's children,
	 * MPI_Comm_connect's peers), which have no rank here. */
	int remote_size;
	int *remote;
};

/* A rank's membership in a communicator. */
struct snap_member {
	int comm;		/* index into snap.comms */
	int local_rank;
};

struct snap_op {
	/* The small fields first, the 8-byte ones after them: a million
	 * ranks' operations are most of a read snapshot's memory. */
	enum snap_op_kind kind;
	enum snap_op_status status;
	enum snap_op_source source;
	int comm;		/* index into snap.comms, -1 if unknown */
	int peer_local;		/* desired peer, local rank in comm; -1 for
				 * MPI_ANY_SOURCE */
	int peer_global;	/* the same as a global rank; -1 for any or
				 * unknown */
	int tag;		/* desired tag; meaningful if !any_tag */
	bool any_tag;
	bool system_buffer;
	/* The DLL said "complete" but the request was still being waited on
	 * (Open MPI's one-byte read of req_complete): status corrected. */
	bool status_corrected;
	/* Valid if status >= matched, or for a send. */
	int actual_local;
	int actual_global;
	int actual_tag;
	int nextra;		/* of extra[] */
	uint64_t actual_length;
	uint64_t length;	/* desired length in bytes */
	uint64_t buffer;
	uint64_t request;	/* the MPI request's address (Open MPI's DLL), or its
				 * handle found in libmdtrack.so's table by
				 * call, peer and tag; 0 if unknown */
	/* The request's sequence number (Open MPI:
	 * mca_pml_base_request_t.req_sequence; for an unexpected fragment
	 * its match header's hdr_seq), 0 if unknown.  A new message has a
	 * new one: the collector compares looks with it. */
	uint64_t sequence;
	/* From ob1: "recv", "probe", "iprobe", "mprobe", "improbe" (posted
	 * requests), "unexpected" (arrived, unmatched), "cant_match"
	 * (arrived out of order); NULL from the DLL. */
	const char *req_type;
	/* The datatype's full name ("MPI_DOUBLE") and the element count,
	 * read from the request; NULL and 0 if unknown. */
	const char *datatype;
	uint64_t count;
	const char *extra[5];	/* the DLL's extra_text lines, nextra */
};

/*
 * A record of the interposition library (libmdtrack.so, include/mdtrack.h)
 * in a rank, as the collector read it: the call that posted or started a
 * pending request, the persistent request's creation behind a start, or
 * the last collective the rank called on a communicator, or its last
 * polling call and how many it made.  Numbers are
 * what the program passed, with the MPI library's special values made
 * portable (SNAP_TRACK_*).
 */
enum snap_track_kind {
	SNAP_TRACK_POST,	/* created or started a request */
	SNAP_TRACK_INIT,	/* created a persistent request */
	SNAP_TRACK_COLL,	/* last collective on a communicator */
	/* The rank's polling calls (tests, probes): seq counts them, call
	 * and site are the last one's. */
	SNAP_TRACK_POLL,
	SNAP_TRACK_KIND_LAST = SNAP_TRACK_POLL,
};

#define SNAP_TRACK_NONE (-0x7fffffff)	/* no peer, root or tag */
#define SNAP_TRACK_ANY (-0x7ffffffe)	/* MPI_ANY_SOURCE / MPI_ANY_TAG */
#define SNAP_TRACK_PROC_NULL (-0x7ffffffd)
#define SNAP_TRACK_ROOT (-0x7ffffffc)	/* MPI_ROOT (intercommunicator) */

struct snap_track_rec {
	enum snap_track_kind kind;
	const char *call;	/* "MPI_Irecv" */
	uint64_t seq;		/* order of the calls (within a kind) */
	uint64_t request;	/* the MPI_Request handle, 0 if none */
	uint64_t comm_handle;	/* the MPI_Comm handle in the rank */
	int comm;		/* snap comm index, -1 if not known */
	const char *comm_name;	/* a predefined communicator's name, NULL */
	int peer;		/* local rank: dest, source or root */
	int tag;
	int count;
	uint64_t datatype;	/* handle, 0 if none */
	const char *datatype_name;	/* "MPI_INT"; NULL if not predefined */
	uint64_t op;		/* handle, 0 if none */
	const char *op_name;	/* "MPI_SUM"; NULL if not predefined */
	uint64_t ncalls;	/* COLL: collectives called on comm so far */
	uint64_t ret;		/* return address of the call */
	const char *func, *file;	/* the caller, NULL if unknown */
	int line;		/* 0 if unknown */
};

struct snap_rank {
	int rank;		/* global rank: index in MPIR_proctable */
	int pid;
	enum snap_rank_state state;
	enum snap_progress progress;
	const char *reason;	/* why not collected or gone; NULL if read */
	/* Below MPI_THREAD_MULTIPLE, no other thread may call MPI while
	 * one waits in it: a thread outside MPI cannot send. */
	enum snap_thread_level thread_level;
	/* MPI_Finalize has returned in the rank (the MPI library's own
	 * state says so: Open MPI's ompi_mpi_state): alive, but it sends
	 * and receives nothing any more. */
	bool finalized;
	int stopped_by;		/* the signal that held it stopped when it
				 * was read (SIGSTOP, SIGTSTP: stopped by
				 * someone else; it runs nothing until
				 * SIGCONT), 0 if it was running */
	const char *host;
	const char *exe;
	/* The host whose collector handled the rank (the front end's, or
	 * the agent's there): read it, or found it gone or unreadable;
	 * NULL when no collector reached it. */
	const char *collected_on;

	/* The rank's application-level position, from its threads: the MPI
	 * call of its application thread (NULL if outside MPI) and the
	 * user's call site. */
	const char *mpi_call;
	const char *call_func;
	const char *call_file;
	int call_line;

	int nmembers;
	struct snap_member *members;	/* communicators the rank is in */

	enum snap_queues queues;
	bool unexpected_available;	/* the DLL shows the unexpected queue */
	/* ob1's matching queues were read for this rank: its posted
	 * receives, probes and collectives' internal requests are all in
	 * ops, so one that is not there is not pending. */
	bool ob1;
	/* A count the MPI library moves whenever the rank's messages move,
	 * read in every look: MPICH ch3's completed requests
	 * (MPIDI_CH3I_progress_completion_count), Open MPI ob1's message
	 * sequence numbers (sent and taken in, summed over every
	 * communicator and peer).  When it changed, the rank moved, though
	 * its call and (hidden) operations look the same.  has_completions
	 * false: not read.  The collector judges progress with it; it is
	 * not written. */
	bool has_completions;
	/* libmdtrack.so is present in the rank (below). */
	bool tracked;
	/* Its arrays (members, ops, threads, frames, track) live in the
	 * snapshot's pool (snap_alloc: the reader's), freed with the
	 * snapshot, not one by one. */
	bool pooled;
	const char *queues_reason;	/* with SNAP_QUEUES_NONE */

	int nops;
	int nthreads;
	struct snap_op *ops;
	struct snap_thread *threads;

	/* libmdtrack.so's records it dropped (its rings overwrite the
	 * oldest) and those kept (those of pending requests and the
	 * collectives). */
	int ntrack;
	uint64_t track_dropped;
	struct snap_track_rec *track;
	uint64_t completions;	/* with has_completions */
};

struct snap {
	int version;
	int64_t time;		/* Unix seconds at collection */
	const char *tool;	/* "mpi-deadlock 0.1.0" */
	const char *host;	/* where it was collected */
	int starter_pid;
	const char *starter;	/* the starter's executable */
	const char *mpi;	/* the DLL's version string */
	const char *impl;	/* "Open MPI", "MPICH"; NULL if unknown */
	const char *dll;	/* path of the DLL used */
	const char *types;	/* where the MPI library's types came from */
	int looks;		/* looks taken (>= 1) */
	int interval_ms;	/* between looks */

	int ncomms;
	struct snap_comm *comms;
	int nranks;
	struct snap_rank *ranks;	/* index == global rank */
	/* 0: the whole job.  Else a partial snapshot (an agent's, a level
	 * of a fan-in; "held" in the file): the job has job_nranks ranks,
	 * ranks[] only the nranks this part holds, ranks[i].rank their
	 * global numbers in increasing order; the others are remote. */
	int job_nranks;
	int nnotes;
	const char **notes;	/* what the collector wants a person to know */

	struct snap_pool *pool;	/* the interned strings */
};

/* A new, empty snapshot (version set, everything else zero). */
struct snap *snap_new(void);
/* Frees s and all it owns; snap_free(NULL) does nothing. */
void snap_free(struct snap *s);

/* Free what one rank owns (its threads' frames, threads, ops, members,
 * track; nothing if pooled: the pool keeps them); the strings stay in
 * the snapshot's pool.  The rank itself is not freed and its counts are
 * left as they were. */
void snap_rank_free_data(struct snap_rank *r);

/* n zeroed bytes (8-byte aligned) that live as long as s: a million
 * ranks' small arrays cost no malloc each.  For a rank's arrays only if
 * the rank is marked pooled. */
void *snap_alloc(struct snap *s, size_t n);

/* Move what snap_alloc gave src into dst's pool: it lives as long as dst.
 * src's interned strings go with it (src forgets them; its notes must
 * not be used after).  For a reader's worker snapshot. */
void snap_adopt_pool(struct snap *dst, struct snap *src);

/* Intern a string in s: the result lives as long as s.  NULL stays NULL. */
const char *snap_str(struct snap *s, const char *str);

/* Add a note (copied). */
void snap_note(struct snap *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Resize s->ranks to n zeroed ranks, rank i numbered i. */
void snap_set_nranks(struct snap *s, int n);
/* Find or add the communicator (id, name, group); returns its index.
 * group (size entries, or NULL) is copied. */
int snap_comm_intern(struct snap *s, uint64_t id, const char *name, int size,
		     const int *group);
/* The same, with a group of snap_group_new (or NULL) that a new entry
 * shares instead of copying. */
int snap_comm_intern_shared(struct snap *s, uint64_t id, const char *name,
			    int size, int *group);

/*
 * A communicator's group as snapshots share it: a million-rank
 * MPI_COMM_WORLD read from a thousand partial snapshots is one array.
 * snap_group_new gives n entries (the caller fills them) and one
 * reference; snap_group_get adds one (and returns g), snap_group_put
 * drops one and frees the array with the last.  Thread-safe; a shared
 * group is not changed.
 */
int *snap_group_new(int n);
int *snap_group_get(int *g);
void snap_group_put(int *g);

/* Set the topology of communicator comm: first (size + 1 entries) and
 * nbr (first[size] entries, local ranks) are copied.  kind NONE clears
 * it. */
void snap_comm_set_topo(struct snap *s, int comm, enum snap_topo kind,
			const int *first, const int *nbr);
/* Make comm an intercommunicator with this remote group (copied); a
 * NULL remote of size > 0: remote processes outside the job. */
void snap_comm_set_remote(struct snap *s, int comm, int size,
			  const int *remote);
/* The global rank of local rank peer of comm's peers (the remote group
 * of an intercommunicator, else its group); -1 if not known. */
int snap_comm_peer(const struct snap *s, int comm, int peer);
/*
 * Copy rank (an index in both) from src into dst, deeply: its strings
 * interned in dst, its communicators interned in dst (by id, name and
 * group) and its member and op indices renumbered.  Whatever dst held
 * for the rank is freed.  Both must have more than rank ranks.  Used to
 * merge the partial snapshots of a many-host job (snapmerge.c).
 */
void snap_copy_rank(struct snap *dst, const struct snap *src, int rank);
/*
 * Move every rank part holds into dst (rank for rank, as snap_copy_rank
 * places them, without copying their arrays; each of part's
 * communicators interned once) and add its notes.  part is a partial
 * snapshot of a job of dst->nranks ranks (job_nranks), or a whole one of
 * that many ranks whose ranks that are not remote are moved.  dst's
 * header is left alone.  Returns 0, after which part holds no rank data
 * and only snap_free may be called on it, or -MD_E_INPUT (reported,
 * part untouched) when the job sizes differ.  Not thread-safe on dst.
 */
int snap_merge_part(struct snap *dst, struct snap *part);

/* Names used in the file format and in reports. */
/* names[i] of a NULL-ended list, or "?" for a value past it. */
const char *snap_name_of(const char *const *names, unsigned i);
const char *snap_state_name(enum snap_rank_state st);
const char *snap_progress_name(enum snap_progress p);
const char *snap_op_kind_name(enum snap_op_kind k);
const char *snap_status_name(enum snap_op_status st);
const char *snap_source_name(enum snap_op_source src);
const char *snap_topo_name(enum snap_topo t);		/* "cart", ... */
const char *snap_track_kind_name(enum snap_track_kind k);
/* The same names, indexed by the value, each list NULL-ended (what the
 * reader accepts). */
extern const char *const snap_state_names[];
extern const char *const snap_progress_names[];
extern const char *const snap_thread_level_names[];
extern const char *const snap_op_kind_names[];
extern const char *const snap_status_names[];
extern const char *const snap_source_names[];
extern const char *const snap_topo_names[];
extern const char *const snap_track_kind_names[];

/*
 * Write s to f in the snapshot format.  Returns 0 or -MD_E_SYS (error
 * reported).
 */
int snap_write(const struct snap *s, FILE *f);

/*
 * Read a snapshot from f (name is used in messages).  On success returns 0
 * and *out; on a malformed, truncated or wrong-version file returns
 * -MD_E_INPUT after reporting one line that names the file, the line and
 * column, and what was wrong.
 */
int snap_read(FILE *f, const char *name, struct snap **out);

/* How to read. */
struct snap_read_opts {
	/* Threads that read the rank lines (0 or 1: the caller's only).
	 * More are used only on a regular file of a whole snapshot with
	 * many ranks; the result and the messages are the same. */
	int threads;
	/* Rank lines a snapshot needs before threads read it (0: 4096,
	 * below which one thread is as fast); lower to test the parallel
	 * read on small inputs (tests/fuzz/snapread_fuzz.c). */
	int parallel_min;
	/* Set by the reader: the threads that read the rank lines (1 when
	 * one did, or when the file was read again by one after an error
	 * or an inconsistency that a worker found). */
	int threads_used;
	/* Groups to share with other reads (snap_groups_new), or NULL:
	 * the readers of many partial snapshots of one job give the same
	 * one, so a big group is expanded and stored once. */
	struct snap_groups *groups;
};

struct snap_groups *snap_groups_new(void);
void snap_groups_free(struct snap_groups *g);

/* snap_read with options (opts NULL: the defaults). */
int snap_read_opts(FILE *f, const char *name, struct snap_read_opts *opts,
		   struct snap **out);

#endif /* MD_SNAP_H */
