/*
 * unexpected.c - the evidence of a tag or communicator mismatch: a
 * receive that waits while a message from its peer sits unmatched in the
 * waiting rank's unexpected queue (read from ob1's queues; the DLL does
 * not show them).
 */
#include <stdlib.h>
#include <string.h>

#include "anl_int.h"
#include "md.h"
#include "mpicall.h"

/* A message from another source, with the tag the receive wants, on its
 * communicator: the receive may name the wrong source. */
static bool other_source(const struct snap_op *recv, const struct snap_op *u)
{
	return u->kind == SNAP_OP_UNEXPECTED && u->tag >= 0 &&
	       recv->peer_global >= 0 && u->peer_global >= 0 &&
	       u->peer_global != recv->peer_global && recv->comm >= 0 &&
	       u->comm == recv->comm && (recv->any_tag || u->tag == recv->tag);
}

/* Does the unexpected message u explain why recv waits? */
static bool explains(const struct snap_op *recv, const struct snap_op *u)
{
	bool same_comm = recv->comm >= 0 && u->comm == recv->comm;

	if (u->kind != SNAP_OP_UNEXPECTED)
		return false;
	/* A collective's own message (negative tag) explains nothing
	 * about a point-to-point receive. */
	if (u->tag < 0)
		return false;
	if (recv->peer_global >= 0) {
		if (u->peer_global != recv->peer_global)
			return false;
	} else if (!same_comm) {
		/* MPI_ANY_SOURCE: a message from a rank outside the
		 * receive's communicator says little. */
		if (recv->peer_local >= 0 || u->peer_global < 0)
			return false;
	}
	if (!same_comm)
		return true;
	return !recv->any_tag && u->tag != recv->tag;
}

int anl_unexpected_find(const struct snap *s, int rank, int k, int *out,
			int max)
{
	const struct snap_rank *sr = &s->ranks[rank];
	const struct snap_op *recv = &sr->ops[k];
	int n = 0;

	if (recv->kind != SNAP_OP_RECV)
		return 0;
	/* The peer's own messages first, then those of other sources. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < sr->nops; i++)
			if (pass ? other_source(recv, &sr->ops[i])
				 : explains(recv, &sr->ops[i])) {
				if (n < max)
					out[n] = i;
				n++;
			}
	return n;
}

/* The sender's pending send of this message, shown by its stack. */
static char *sent_at(const struct anl_result *r, int rank,
		     const struct snap_op *u)
{
	const struct snap_rank *pr;

	if (u->peer_global < 0 || u->peer_global >= r->s->nranks)
		return NULL;
	pr = &r->s->ranks[u->peer_global];
	/* Only a sender stopped in its send is where the message was sent
	 * (one polling its MPI_Issend with MPI_Test is elsewhere). */
	if (pr->state != SNAP_RANK_COLLECTED || !pr->call_file ||
	    (md_call_class(pr->mpi_call) != MD_CALL_SEND &&
	     md_call_class(pr->mpi_call) != MD_CALL_SENDRECV))
		return NULL;
	for (int i = 0; i < pr->nops; i++) {
		const struct snap_op *o = &pr->ops[i];

		if (o->kind == SNAP_OP_SEND && o->status != SNAP_ST_COMPLETE &&
		    o->peer_global == rank && o->tag == u->tag &&
		    o->comm == u->comm)
			return xasprintf("%s:%d", pr->call_file, pr->call_line);
	}
	return NULL;
}

static char *comm_text(const struct anl_result *r, int comm)
{
	if (comm >= 0 && comm < r->s->ncomms)
		return xasprintf(" on %s (id %llu)", anl_comm_name(r, comm),
				 (unsigned long long)r->s->comms[comm].id);
	return xstrdup(" on an unknown communicator");
}

static char *who(const struct snap_op *op)
{
	return op->peer_global >= 0 ? xasprintf("rank %d", op->peer_global)
				    : xstrdup("any rank");
}

static char *tag_text(const struct snap_op *op)
{
	return op->any_tag ? xstrdup("any tag") : xasprintf("tag %d", op->tag);
}

/* The unmatched messages after the first: "; also unmatched: rank 2's
 * with tag 8, ..." (the first 3), then how many more. */
static char *more_text(const struct anl_result *r, int rank,
		       const int *found, int n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (n < 2)
		return xstrdup("");
	f = open_memstream(&text, &len);
	fputs("; also unmatched:", f);
	for (int i = 1; i < n && i < 4; i++) {
		const struct snap_op *u = &r->s->ranks[rank].ops[found[i]];

		fprintf(f, "%s rank %d's with tag %d", i > 1 ? "," : "",
			u->peer_global, u->tag);
	}
	if (n > 4)
		fprintf(f, " and %d more message%s", n - 4,
			n - 4 == 1 ? "" : "s");
	fclose(f);
	return text;
}

char *anl_unexpected_text(const struct anl_result *r, int rank, int k)
{
	const struct snap_op *recv = &r->s->ranks[rank].ops[k];
	const struct snap_op *u;
	int found[4], n = anl_unexpected_find(r->s, rank, k, found, 4);
	char *site, *rc = NULL, *uc = NULL, *from, *at, *tag, *text, *more;
	bool other;

	if (!n)
		return NULL;
	u = &r->s->ranks[rank].ops[found[0]];
	other = u->comm != recv->comm;
	if (other) {
		rc = comm_text(r, recv->comm);
		uc = comm_text(r, u->comm);
	}
	site = anl_site(r, rank);
	from = who(recv);
	tag = tag_text(recv);
	at = sent_at(r, rank, u);
	more = more_text(r, rank, found, n);
	text = xasprintf("rank %d waits for %s from %s%s (%s); a message from "
			 "rank %d with tag %d%s arrived and is unmatched%s%s%s"
			 "%s",
			 rank, tag, from, rc ? rc : "", site, u->peer_global,
			 u->tag, uc ? uc : "", at ? " (sent at " : "",
			 at ? at : "", at ? ")" : "", more);
	free(more);
	free(site);
	free(from);
	free(tag);
	free(at);
	free(rc);
	free(uc);
	return text;
}
