/*
 * dump.c - --dump: the snapshot as a person reads it, rank by rank.
 *
 * Everything the snapshot holds is shown (no verdict, no grouping), in
 * file order, so the output is deterministic and tests compare it with
 * expected files (tests/expected/dump/).
 */
#include "analyze.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "md.h"

static const char *or_unknown(const char *s)
{
	return s && *s ? s : "?";
}

/* A group as "0-3,8,10-11": a million ranks stay one short line. */
static void put_ranges(const int *g, int n, FILE *out)
{
	for (int i = 0; i < n;) {
		int j = i;

		while (j + 1 < n && g[j] < INT32_MAX && g[j + 1] == g[j] + 1)
			j++;
		fprintf(out, "%s%d", i ? "," : "", g[i]);
		if (j > i)
			fprintf(out, "-%d", g[j]);
		i = j + 1;
	}
}

static void put_comm_name(const struct snap *s, int c, FILE *out)
{
	if (c < 0 || c >= s->ncomms) {
		fputs("communicator unknown", out);
		return;
	}
	fprintf(out, "%s (id %" PRIu64 ")",
		*s->comms[c].name ? s->comms[c].name : "unnamed",
		s->comms[c].id);
}

static void dump_header(const struct snap *s, FILE *out)
{
	char when[64] = "?";
	time_t t = (time_t)s->time;
	struct tm tm;

	if (s->time && gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "snapshot version %d: %d ranks, %d communicators\n",
		s->version, s->nranks, s->ncomms);
	fprintf(out, "collected %s on %s by %s\n", when, or_unknown(s->host),
		or_unknown(s->tool));
	fprintf(out, "starter: %s (pid %d)\n", or_unknown(s->starter),
		s->starter_pid);
	if (s->impl)
		fprintf(out, "implementation: %s\n", s->impl);
	fprintf(out, "MPI: %s\nDLL: %s\ntypes: %s\n", or_unknown(s->mpi),
		or_unknown(s->dll), or_unknown(s->types));
	fprintf(out, "looks: %d, %d ms apart\n", s->looks, s->interval_ms);
}

static void dump_rank_line(const struct snap_rank *r, FILE *out)
{
	fprintf(out, "\nrank %d: pid %d, host %s, %s", r->rank, r->pid,
		or_unknown(r->host), snap_state_name(r->state));
	if (r->reason)
		fprintf(out, " (%s)", r->reason);
	if (r->collected_on)
		fprintf(out, ", collected on %s", r->collected_on);
	fprintf(out, ", progress %s", snap_progress_name(r->progress));
	if (r->finalized)
		fputs(", finalized", out);
	if (r->mpi_call)
		fprintf(out, ", in %s", r->mpi_call);
	else if (r->state == SNAP_RANK_COLLECTED)
		fputs(", not in MPI", out);
	if (r->call_func || r->call_file) {
		fprintf(out, " at %s", or_unknown(r->call_func));
		if (r->call_file)
			fprintf(out, " (%s:%d)", r->call_file, r->call_line);
	}
	fputc('\n', out);
	if (r->exe)
		fprintf(out, "  executable: %s\n", r->exe);
}

static void dump_members(const struct snap *s, const struct snap_rank *r,
			 FILE *out)
{
	if (!r->nmembers)
		return;
	fputs("  communicators:\n", out);
	for (int i = 0; i < r->nmembers; i++) {
		const struct snap_member *m = &r->members[i];
		const struct snap_comm *c;

		fputs("    ", out);
		put_comm_name(s, m->comm, out);
		if (m->comm < 0 || m->comm >= s->ncomms) {
			fputc('\n', out);
			continue;
		}
		c = &s->comms[m->comm];
		fprintf(out, ": size %d, local rank %d, group ", c->size,
			m->local_rank);
		if (c->group)
			put_ranges(c->group, c->size, out);
		else
			fputs("unknown", out);
		fputc('\n', out);
	}
}

static void put_peer(int local, int global, FILE *out)
{
	if (local < 0 && global < 0)
		fputs("ANY_SOURCE", out);
	else if (local < 0)
		fprintf(out, "local ? = global %d", global);
	else if (global < 0)
		fprintf(out, "local %d = global ?", local);
	else
		fprintf(out, "local %d = global %d", local, global);
}

static void dump_op(const struct snap *s, const struct snap_op *op, FILE *out)
{
	fprintf(out, "    %s %s on ", snap_op_kind_name(op->kind),
		snap_status_name(op->status));
	put_comm_name(s, op->comm, out);
	fputs(op->kind == SNAP_OP_SEND ? ", to " : ", from ", out);
	put_peer(op->peer_local, op->peer_global, out);
	if (op->any_tag)
		fputs(", tag ANY", out);
	else
		fprintf(out, ", tag %d", op->tag);
	fprintf(out, ", length %" PRIu64, op->length);
	if (op->buffer)
		fprintf(out, ", buffer 0x%" PRIx64, op->buffer);
	if (op->system_buffer)
		fputs(" (system buffer)", out);
	if (op->request)
		fprintf(out, ", request 0x%" PRIx64, op->request);
	if (op->datatype)
		fprintf(out, ", %" PRIu64 " x %s", op->count, op->datatype);
	if (op->sequence)
		fprintf(out, ", seq %" PRIu64, op->sequence);
	if (op->source != SNAP_SRC_DLL)
		fprintf(out, " [%s%s%s]", snap_source_name(op->source),
			op->req_type ? ": " : "",
			op->req_type ? op->req_type : "");
	fputc('\n', out);
	if (op->status >= SNAP_ST_MATCHED || op->kind == SNAP_OP_SEND) {
		fputs("      actual: ", out);
		put_peer(op->actual_local, op->actual_global, out);
		fprintf(out, ", tag %d, length %" PRIu64 "\n", op->actual_tag,
			op->actual_length);
	}
	if (op->status_corrected)
		fputs("      (status corrected: still being waited on)\n", out);
	for (int i = 0; i < op->nextra && i < 5; i++)
		fprintf(out, "      | %s\n", op->extra[i] ? op->extra[i] : "");
}

static void dump_queues(const struct snap *s, const struct snap_rank *r,
			FILE *out)
{
	if (r->state != SNAP_RANK_COLLECTED)
		return;
	if (r->queues == SNAP_QUEUES_NONE) {
		fprintf(out,
			"  message queues: no information from the DLL "
			"(%s)\n",
			or_unknown(r->queues_reason));
		return;
	}
	if (!r->nops)
		fputs("  pending operations: none\n", out);
	else
		fputs("  pending operations:\n", out);
	for (int i = 0; i < r->nops; i++)
		dump_op(s, &r->ops[i], out);
	if (!r->unexpected_available)
		fputs("  unexpected queue: not available from the DLL\n", out);
}

static void dump_frame(const struct snap_thread *t, int i, FILE *out)
{
	const struct snap_frame *f = &t->frames[i];

	fprintf(out, "    #%-2d %s", i, or_unknown(f->func));
	if (f->file)
		fprintf(out, " at %s:%d", f->file, f->line);
	else
		fprintf(out, " in %s", or_unknown(f->object));
	fprintf(out, " [pc 0x%" PRIx64 "]", f->pc);
	if (i == t->mpi_frame)
		fputs("  <- MPI call", out);
	if (i == t->user_frame)
		fputs("  <- call site", out);
	fputc('\n', out);
}

static void dump_threads(const struct snap_rank *r, FILE *out)
{
	for (int i = 0; i < r->nthreads; i++) {
		const struct snap_thread *t = &r->threads[i];

		fprintf(out, "  thread %d", t->tid);
		if (t->progress_thread)
			fputs(" (MPI progress thread)", out);
		if (t->mpi_call)
			fprintf(out, " in %s", t->mpi_call);
		fputs(t->nframes ? ":\n" : ": no stack\n", out);
		for (int f = 0; f < t->nframes; f++)
			dump_frame(t, f, out);
	}
}

void anl_dump(const struct snap *s, FILE *out)
{
	dump_header(s, out);
	for (int i = 0; i < s->nranks; i++) {
		const struct snap_rank *r = &s->ranks[i];

		dump_rank_line(r, out);
		dump_members(s, r, out);
		dump_queues(s, r, out);
		dump_threads(r, out);
	}
	if (s->nnotes)
		fputs("\nnotes:\n", out);
	for (int i = 0; i < s->nnotes; i++)
		fprintf(out, "  %s\n", s->notes[i]);
}
