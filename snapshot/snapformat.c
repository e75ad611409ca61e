/*
 * snapformat.c - the snapshot's header, communicator and rank lines,
 * key by key (snapformat.h), in the order they are written.
 */
#include "snap.h"

#include <limits.h>

#include "snapformat.h"

_Static_assert(sizeof(enum snap_op_kind) == sizeof(int) &&
		       sizeof(enum snap_rank_state) == sizeof(int),
	       "SJ_ENUM stores an int");

/* The writer writes "format", "version" before these and the counts
 * after them; the reader reads those itself. */
#define SJ_T struct snap
const struct sj_field snap_header_fields[] = {
	SJ_FIELD("time", SJ_I64, time, .always = true),
	SJ_FIELD("tool", SJ_STR, tool),
	SJ_FIELD("host", SJ_STR, host),
	SJ_FIELD("starter_pid", SJ_INT, starter_pid, .max = INT_MAX,
		 .always = true),
	SJ_FIELD("starter", SJ_STR, starter),
	SJ_FIELD("mpi", SJ_STR, mpi),
	SJ_FIELD("implementation", SJ_STR, impl),
	SJ_FIELD("dll", SJ_STR, dll),
	SJ_FIELD("types", SJ_STR, types),
	SJ_FIELD("looks", SJ_INT, looks, .max = INT_MAX, .always = true),
	SJ_FIELD("interval_ms", SJ_INT, interval_ms, .max = INT_MAX,
		 .always = true),
	{ NULL },
};
#undef SJ_T

/* After "comm", the line's index.  A group's size comes before it; a
 * "remote" counts only with a "remote_size". */
#define SJ_T struct snap_comm
const struct sj_field snap_comm_fields[] = {
	SJ_FIELD("id", SJ_U64, id, .always = true),
	SJ_FIELD("name", SJ_STR, name),
	SJ_FIELD("size", SJ_INT, size, .max = SJ_NRANKS, .always = true),
	SJ_FIELD("group", SJ_FN, group, .count = offsetof(SJ_T, size),
		 .fn = sr_group, .put = sw_group),
	/* Beyond nranks when the remote group is outside the job. */
	SJ_FIELD("remote_size", SJ_INT, remote_size, .max = INT_MAX),
	SJ_FIELD("remote", SJ_FN, remote, .count = offsetof(SJ_T, remote_size),
		 .fn = sr_group, .put = sw_group),
	SJ_FIELD("topo", SJ_ENUM, topo, .sub = snap_topo_names),
	SJ_CALL("neighbors", neighbors),
	{ NULL },
};
#undef SJ_T

#define SJ_T struct snap_op
static const struct sj_field actual_fields[] = {
	SJ_INDEX("peer", actual_local, INT_MAX),
	SJ_INDEX("peer_global", actual_global, SJ_LAST_RANK),
	SJ_FIELD("tag", SJ_INT, actual_tag, .min = INT_MIN, .max = INT_MAX),
	SJ_FIELD("length", SJ_U64, actual_length),
	{ NULL },
};

/* "peer" -1 is written: a receive from any source says so. */
static const struct sj_field op_fields[] = {
	SJ_FIELD("kind", SJ_ENUM, kind, .sub = snap_op_kind_names,
		 .always = true),
	SJ_FIELD("status", SJ_ENUM, status, .sub = snap_status_names),
	SJ_INDEX("comm", comm, SJ_LAST_COMM),
	/* Past the communicator's group when the collector could not read
	 * an intercommunicator's remote group: then no global rank. */
	SJ_INDEX("peer", peer_local, INT_MAX, .always = true),
	SJ_INDEX("peer_global", peer_global, SJ_LAST_RANK, .always = true),
	SJ_FIELD("tag", SJ_INT, tag, .min = INT_MIN, .max = INT_MAX,
		 .always = true),
	SJ_FIELD("any_tag", SJ_BOOL, any_tag),
	SJ_FIELD("length", SJ_U64, length),
	SJ_FIELD("buffer", SJ_ADDR, buffer),
	SJ_FIELD("system_buffer", SJ_BOOL, system_buffer),
	SJ_OBJ("actual", actual_fields),
	SJ_FIELD("request", SJ_ADDR, request),
	SJ_FIELD("corrected", SJ_BOOL, status_corrected),
	SJ_FIELD("source", SJ_ENUM, source, .sub = snap_source_names),
	SJ_FIELD("type", SJ_STR, req_type),
	SJ_FIELD("datatype", SJ_STR, datatype),
	SJ_FIELD("count", SJ_U64, count),
	SJ_FIELD("seq", SJ_U64, sequence),
	SJ_CALL("extra", extra),
	{ NULL },
};
#undef SJ_T

#define SJ_T struct snap_frame
static const struct sj_field frame_fields[] = {
	SJ_FIELD("pc", SJ_ADDR, pc),
	SJ_FIELD("func", SJ_STR, func),
	SJ_FIELD("object", SJ_STR, object),
	SJ_FIELD("file", SJ_STR, file),
	SJ_FIELD("line", SJ_INT, line, .max = INT_MAX),
	{ NULL },
};
#undef SJ_T

/* Frame numbers are indexes into the frames, read before them. */
#define SJ_T struct snap_thread
static const struct sj_field thread_fields[] = {
	SJ_FIELD("tid", SJ_INT, tid, .max = INT_MAX, .always = true),
	SJ_FIELD("call", SJ_STR, mpi_call),
	SJ_FIELD("progress_thread", SJ_BOOL, progress_thread),
	SJ_FIELD("frames", SJ_LIST, frames, .sub = frame_fields, .max = 1 << 20,
		 .size = sizeof(struct snap_frame),
		 .count = offsetof(SJ_T, nframes)),
	SJ_INDEX("mpi_frame", mpi_frame, SJ_LAST_FRAME),
	SJ_INDEX("user_frame", user_frame, SJ_LAST_FRAME),
	SJ_FIELD("called_back_by", SJ_STR, called_back_by),
	{ NULL },
};
#undef SJ_T

const char *const snap_track_specials[3] = { "any", "proc_null", "root" };

#define SJ_T struct snap_track_rec
static const struct sj_field rec_fields[] = {
	SJ_FIELD("kind", SJ_ENUM, kind, .sub = snap_track_kind_names,
		 .def = SNAP_TRACK_POST),
	SJ_FIELD("call", SJ_STR, call),
	SJ_FIELD("seq", SJ_U64, seq),
	SJ_FIELD("request", SJ_ADDR, request),
	SJ_FIELD("comm_handle", SJ_ADDR, comm_handle),
	SJ_INDEX("comm", comm, SJ_LAST_COMM),
	SJ_FIELD("comm_name", SJ_STR, comm_name),
	SJ_FIELD("peer", SJ_FN, peer, .fn = sr_track_num, .put = sw_track_num),
	SJ_FIELD("tag", SJ_FN, tag, .fn = sr_track_num, .put = sw_track_num),
	SJ_FIELD("count", SJ_INT, count, .min = INT_MIN, .max = INT_MAX),
	SJ_FIELD("datatype", SJ_ADDR, datatype),
	SJ_FIELD("datatype_name", SJ_STR, datatype_name),
	SJ_FIELD("op", SJ_ADDR, op),
	SJ_FIELD("op_name", SJ_STR, op_name),
	SJ_FIELD("ncalls", SJ_U64, ncalls),
	SJ_FIELD("ret", SJ_ADDR, ret),
	SJ_FIELD("func", SJ_STR, func),
	SJ_FIELD("file", SJ_STR, file),
	SJ_FIELD("line", SJ_INT, line, .max = INT_MAX),
	{ NULL },
};
#undef SJ_T

#define SJ_T struct snap_rank
/* libmdtrack.so's records: one object, so a reader that does not know
 * it skips it whole. */
static const struct sj_field track_fields[] = {
	SJ_FIELD("dropped", SJ_U64, track_dropped),
	SJ_FIELD("recs", SJ_LIST, track, .sub = rec_fields, .max = 1 << 20,
		 .size = sizeof(struct snap_track_rec),
		 .count = offsetof(SJ_T, ntrack), .need = "call"),
	{ NULL },
};

static const struct sj_field site_fields[] = {
	SJ_FIELD("func", SJ_STR, call_func),
	SJ_FIELD("file", SJ_STR, call_file),
	SJ_FIELD("line", SJ_INT, call_line, .max = INT_MAX),
	{ NULL },
};

const struct sj_field snap_rank_fields[] = {
	SJ_FIELD("pid", SJ_INT, pid, .max = INT_MAX),
	SJ_FIELD("host", SJ_STR, host),
	SJ_FIELD("exe", SJ_STR, exe),
	SJ_FIELD("collected_on", SJ_STR, collected_on),
	SJ_FIELD("state", SJ_ENUM, state, .sub = snap_state_names),
	SJ_FIELD("progress", SJ_ENUM, progress, .sub = snap_progress_names),
	SJ_FIELD("stopped_by", SJ_INT, stopped_by, .max = 64),
	SJ_FIELD("thread_level", SJ_ENUM, thread_level,
		 .sub = snap_thread_level_names),
	SJ_FIELD("finalized", SJ_BOOL, finalized),
	SJ_FIELD("call", SJ_STR, mpi_call),
	SJ_OBJ("site", site_fields),
	SJ_CALL("members", members),
	SJ_CALL("queues", queues),
	SJ_FIELD("unexpected", SJ_BOOL, unexpected_available),
	SJ_FIELD("ob1", SJ_BOOL, ob1),
	SJ_FIELD("ops", SJ_LIST, ops, .sub = op_fields, .max = 1 << 24,
		 .size = sizeof(struct snap_op), .count = offsetof(SJ_T, nops),
		 .need = "kind", .at_op = true, .fn = sr_check_op),
	SJ_FIELD("threads", SJ_LIST, threads, .sub = thread_fields,
		 .max = 1 << 20, .size = sizeof(struct snap_thread),
		 .count = offsetof(SJ_T, nthreads)),
	SJ_OBJ("track", track_fields, .count = offsetof(SJ_T, tracked)),
	SJ_FIELD("reason", SJ_STR, reason),
	{ NULL },
};
#undef SJ_T
