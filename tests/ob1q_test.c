/*
 * ob1q_test.c - the walk of ob1's matching queues over a fake target:
 * ob1 structures built by hand in fake memory, with a made-up layout
 * given through fake type callbacks (the walk must take every offset from
 * the types, never assume one).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "../collector/ob1q.h"
#include "snap.h"
#include "../collector/target.h"

/* ---- a made-up layout ---- */

static const struct {
	const char *name;	/* "type.member" or "type" for sizeof */
	long v;
} layout[] = {
	{ "opal_pointer_array_t.addr", 40 },
	{ "opal_pointer_array_t.size", 28 },
	{ "ompi_communicator_t.c_contextid", 8 },
	{ "ompi_communicator_t.c_pml_comm", 16 },
	{ "mca_pml_ob1_comm_t.wild_receives", 32 },
	{ "mca_pml_ob1_comm_t.procs", 96 },
	{ "mca_pml_ob1_comm_t.num_procs", 104 },
	{ "mca_pml_ob1_comm_t", 120 },
	{ "mca_pml_ob1_comm_proc_t.expected_sequence", 16 },
	{ "mca_pml_ob1_comm_proc_t.send_sequence", 20 },
	{ "mca_pml_ob1_comm_proc_t.frags_cant_match", 24 },
	{ "mca_pml_ob1_comm_proc_t.specific_receives", 32 },
	{ "mca_pml_ob1_comm_proc_t.unexpected_frags", 80 },
	{ "mca_pml_ob1_comm_proc_t", 128 },
	{ "opal_list_t.opal_list_sentinel", 8 },
	{ "opal_list_item_t.opal_list_next", 16 },
	{ "opal_free_list_item_t.super", 0 },
	{ "ompi_request_t.super", 0 },
	{ "mca_pml_base_request_t.req_ompi", 0 },
	{ "mca_pml_base_request_t.req_type", 64 },
	{ "mca_pml_base_request_t.req_comm", 72 },
	{ "mca_pml_base_request_t.req_datatype", 80 },
	{ "mca_pml_base_request_t.req_count", 96 },
	{ "mca_pml_base_request_t.req_peer", 104 },
	{ "mca_pml_base_request_t.req_tag", 108 },
	{ "mca_pml_base_request_t.req_sequence", 120 },
	{ "mca_pml_base_recv_request_t.req_base", 0 },
	{ "mca_pml_base_send_request_t.req_base", 0 },
	{ "mca_pml_ob1_recv_request_t.req_recv", 0 },
	{ "mca_pml_ob1_recv_request_t.req_bytes_received", 160 },
	{ "mca_pml_ob1_recv_frag_t.super", 0 },
	{ "mca_pml_ob1_recv_frag_t.hdr", 48 },
	{ "mca_pml_ob1_hdr_t.hdr_match", 0 },
	{ "mca_pml_ob1_hdr_t.hdr_rndv", 0 },
	{ "mca_pml_ob1_match_hdr_t.hdr_common", 0 },
	{ "mca_pml_ob1_match_hdr_t.hdr_ctx", 2 },
	{ "mca_pml_ob1_match_hdr_t.hdr_src", 4 },
	{ "mca_pml_ob1_match_hdr_t.hdr_tag", 8 },
	{ "mca_pml_ob1_match_hdr_t.hdr_seq", 12 },
	{ "mca_pml_ob1_common_hdr_t.hdr_type", 0 },
	{ "mca_pml_ob1_rendezvous_hdr_t.hdr_msg_length", 16 },
	{ "opal_free_list_t.fl_allocations", 16 },
	{ "opal_free_list_t.fl_frag_size", 64 },
	{ "opal_free_list_t.fl_frag_alignment", 72 },
	{ "opal_free_list_t.fl_num_per_alloc", 80 },
	{ "opal_free_list_t.fl_num_allocated", 88 },
	{ "opal_free_list_item_t", 48 },
	{ "ompi_request_t.req_type", 24 },
	{ "ompi_request_t.req_state", 28 },
	{ "mca_pml_base_request_t.req_pml_complete", 56 },
	{ "mca_pml_ob1_send_request_t.req_send", 0 },
	{ "mca_pml_ob1_send_request_t.req_bytes_delivered", 168 },
	{ "ompi_datatype_t.super", 0 },
	{ "ompi_datatype_t.name", 200 },
	{ "opal_datatype_t.size", 24 },
};
#define NLAYOUT (sizeof(layout) / sizeof(layout[0]))

/* What a test changes in the layout: one entry dropped or moved. */
static const char *drop_name;
static const char *move_name;

static long lay(const char *name)
{
	for (size_t i = 0; i < NLAYOUT; i++)
		if (!strcmp(layout[i].name, name))
			return layout[i].v;
	cr_assert_fail("no %s in the test layout", name);
	return -1;
}

static int ty_find(void *ctx, const char *name, void **type)
{
	(void)ctx;
	*type = (void *)name;
	return 0;
}

static long ty_lookup(const char *name)
{
	if (drop_name && !strcmp(name, drop_name))
		return -MD_E_NOSYM;
	for (size_t i = 0; i < NLAYOUT; i++)
		if (!strcmp(layout[i].name, name))
			return layout[i].v + (move_name &&
					      !strcmp(name, move_name) ? 8 : 0);
	return -MD_E_NOSYM;
}

static int ty_size(void *ctx, void *type)
{
	(void)ctx;
	return (int)ty_lookup(type);
}

static int ty_offset(void *ctx, void *type, const char *field)
{
	char name[128];

	(void)ctx;
	snprintf(name, sizeof(name), "%s.%s", (const char *)type, field);
	return (int)ty_lookup(name);
}

static const struct mh_types_ops fake_types = {
	.find = ty_find, .size = ty_size, .offset = ty_offset,
};

/* ---- fake memory ---- */

#define BASE 0x100000ULL
#define MEMSZ 0x10000
static unsigned char mem[MEMSZ];
static uint64_t symaddr;	/* ompi_mpi_communicators, 0: none */
static uint64_t recv_fl, send_fl;	/* the request free lists, 0: none */
static uint64_t probe_cls;	/* mca_pml_ob1_recv_request_t_class, 0: none */
static struct tgt *tg;

static void put(uint64_t addr, const void *v, size_t n)
{
	cr_assert(addr >= BASE && addr + n <= BASE + MEMSZ);
	memcpy(mem + (addr - BASE), v, n);
}

static void put64(uint64_t a, uint64_t v) { put(a, &v, 8); }
static void put32(uint64_t a, uint32_t v) { put(a, &v, 4); }
static void put16(uint64_t a, uint16_t v) { put(a, &v, 2); }

static int pr_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return tgt_read(tg, addr, buf, len);
}

static int pr_lookup(void *ctx, const char *name, uint64_t *addr)
{
	uint64_t a = 0;

	(void)ctx;
	if (!strcmp(name, "ompi_mpi_communicators"))
		a = symaddr;
	else if (!strcmp(name, "mca_pml_base_recv_requests"))
		a = recv_fl;
	else if (!strcmp(name, "mca_pml_base_send_requests"))
		a = send_fl;
	else if (!strcmp(name, "mca_pml_ob1_recv_request_t_class"))
		a = probe_cls;
	if (!a)
		return -MD_E_NOSYM;
	if (addr)
		*addr = a;
	return 0;
}

static const struct mh_proc_ops fake_proc = {
	.read = pr_read, .lookup = pr_lookup,
};

/* Addresses of the objects the tests build. */
#define PA (BASE + 0x100)	/* ompi_mpi_communicators */
#define PA_ARR (BASE + 0x200)	/* its entries */
#define COMM (BASE + 0x400)	/* MPI_COMM_WORLD, cid 0 */
#define PML (BASE + 0x600)
#define PROCS (BASE + 0x800)
#define PROC1 (BASE + 0xa00)
#define DTINT (BASE + 0xc00)
#define REQ_WILD (BASE + 0x1000)
#define REQ_INT (BASE + 0x1200)	/* internal receive of a collective */
#define REQ_PROBE (BASE + 0x1400)	/* on the stack in real life */
#define FRAG_A (BASE + 0x2000)
#define FRAG_B (BASE + 0x2200)
#define FRAG_C (BASE + 0x2400)
#define RFL (BASE + 0x3000)	/* mca_pml_base_recv_requests */
#define SFL (BASE + 0x3100)	/* mca_pml_base_send_requests */
#define RCHUNK (BASE + 0x4000)	/* an allocation of 3 receive requests */
#define SCHUNK (BASE + 0x6000)	/* an allocation of 1 send request */
#define FRAGSZ 0x200		/* fl_frag_size: one request */

static void list_init(uint64_t list)
{
	uint64_t s = list + lay("opal_list_t.opal_list_sentinel");

	put64(s + lay("opal_list_item_t.opal_list_next"), s);
}

/* Link items into list, in order, circularly through the sentinel. */
static void list_set(uint64_t list, const uint64_t *items, int n)
{
	uint64_t s = list + lay("opal_list_t.opal_list_sentinel");
	long next = lay("opal_list_item_t.opal_list_next");

	put64(s + next, n ? items[0] : s);
	for (int i = 0; i < n; i++)
		put64(items[i] + next, i + 1 < n ? items[i + 1] : s);
}

static void request(uint64_t req, uint32_t type, int32_t peer, int32_t tag,
		    uint64_t count, uint64_t seq)
{
	put32(req + lay("mca_pml_base_request_t.req_type"), type);
	put64(req + lay("mca_pml_base_request_t.req_comm"), COMM);
	put64(req + lay("mca_pml_base_request_t.req_datatype"), DTINT);
	put64(req + lay("mca_pml_base_request_t.req_count"), count);
	put32(req + lay("mca_pml_base_request_t.req_peer"), (uint32_t)peer);
	put32(req + lay("mca_pml_base_request_t.req_tag"), (uint32_t)tag);
	put64(req + lay("mca_pml_base_request_t.req_sequence"), seq);
}

static void frag(uint64_t f, uint8_t type, uint16_t cid, int32_t src,
		 int32_t tag, uint16_t seq, uint64_t len)
{
	uint64_t h = f + lay("mca_pml_ob1_recv_frag_t.hdr");

	mem[h + lay("mca_pml_ob1_common_hdr_t.hdr_type") - BASE] = type;
	put16(h + lay("mca_pml_ob1_match_hdr_t.hdr_ctx"), cid);
	put32(h + lay("mca_pml_ob1_match_hdr_t.hdr_src"), (uint32_t)src);
	put32(h + lay("mca_pml_ob1_match_hdr_t.hdr_tag"), (uint32_t)tag);
	put16(h + lay("mca_pml_ob1_match_hdr_t.hdr_seq"), seq);
	put64(h + lay("mca_pml_ob1_rendezvous_hdr_t.hdr_msg_length"), len);
}

/* One communicator (cid 0, 2 ranks) with empty queues; procs[0] NULL. */
static void build_world(void)
{
	memset(mem, 0, sizeof(mem));
	symaddr = PA;
	recv_fl = send_fl = probe_cls = 0;
	put64(PA + lay("opal_pointer_array_t.addr"), PA_ARR);
	put32(PA + lay("opal_pointer_array_t.size"), 4);
	put64(PA_ARR, COMM);	/* entries 1-3 NULL */
	put32(COMM + lay("ompi_communicator_t.c_contextid"), 0);
	put64(COMM + lay("ompi_communicator_t.c_pml_comm"), PML);
	list_init(PML + lay("mca_pml_ob1_comm_t.wild_receives"));
	put64(PML + lay("mca_pml_ob1_comm_t.procs"), PROCS);
	put64(PML + lay("mca_pml_ob1_comm_t.num_procs"), 2);
	put64(PROCS, 0);
	put64(PROCS + 8, PROC1);
	list_init(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"));
	list_init(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"));
	strcpy((char *)mem + (DTINT + lay("ompi_datatype_t.name") - BASE),
	       "MPI_INT");
	put64(DTINT + lay("opal_datatype_t.size"), 4);
}

/* The snapshot side: MPI_COMM_WORLD (id 0) of 2 ranks, rank 0 read. */
static struct snap *snap_world(void)
{
	struct snap *s = snap_new();
	int group[2] = { 0, 1 };

	snap_set_nranks(s, 2);
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", 2, group);
	s->ranks[0].members = xcalloc(1, sizeof(struct snap_member));
	s->ranks[0].nmembers = 1;
	return s;
}

static struct ob1_layout *lo;

static void setup(void)
{
	char *missing = NULL;

	drop_name = move_name = NULL;
	cr_assert_eq(ob1_layout_new(&fake_types, NULL, &lo, &missing), 0,
		     "missing %s", missing ? missing : "");
	build_world();
	tg = tgt_fake_new(4242);
	tgt_fake_add_region(tg, BASE, mem, MEMSZ);
}

/* The fake target copies the memory: take changes made after setup. */
static void refresh(void)
{
	tgt_free(tg);
	tg = tgt_fake_new(4242);
	tgt_fake_add_region(tg, BASE, mem, MEMSZ);
}

static void teardown(void)
{
	tgt_free(tg);
	tg = NULL;
	ob1_layout_free(lo);
	lo = NULL;
}

TestSuite(ob1q, .init = setup, .fini = teardown);

static int collect(struct snap *s, struct ob1_stats *st)
{
	refresh();
	return ob1_collect(lo, &fake_proc, NULL, s, &s->ranks[0], st);
}

static void free_snap(struct snap *s)
{
	snap_free(s);
}

/* A thread stopped in MPI_Iprobe: frames innermost first, each with its
 * stack pointer; the probe's request sits on the stack below the caller
 * of mca_pml_ob1_iprobe. */
#define STACK (BASE + 0x8000)
#define CLS (BASE + 0x7f00)
static void iprobe_thread(struct snap_rank *r, const char *pml_fn)
{
	static const char *const fn[] = { "opal_progress", NULL, "PMPI_Iprobe",
					  "main" };
	struct snap_thread *th = xcalloc(1, sizeof(*th));

	th->nframes = 4;
	th->frames = xcalloc(4, sizeof(*th->frames));
	for (int i = 0; i < 4; i++) {
		th->frames[i].func = i == 1 ? pml_fn : fn[i];
		th->frames[i].sp = STACK + (uint64_t)i * 0x800;
	}
	th->mpi_call = "MPI_Iprobe";
	r->threads = th;
	r->nthreads = 1;
}

Test(ob1q, an_iprobe_in_progress_is_read_from_the_stack)
{
	struct snap *s = snap_world();
	uint64_t req = STACK + 0xa00;	/* in mca_pml_ob1_iprobe's frame */
	const struct snap_op *o;

	probe_cls = CLS;
	put64(STACK + 0x100, CLS + 8);	/* not the class: skipped */
	put64(STACK + 0x200, CLS);	/* the class, but a receive: skipped */
	request(STACK + 0x200, 2, 1, 3, 0, 0);
	put64(req, CLS);
	request(req, 3, 1, 9, 0, 77);	/* MCA_PML_REQUEST_IPROBE */
	iprobe_thread(&s->ranks[0], "mca_pml_ob1_iprobe");
	refresh();
	cr_assert_eq(ob1_collect_iprobes(lo, &fake_proc, NULL, s, &s->ranks[0]),
		     1);
	cr_assert_eq(s->ranks[0].nops, 1);
	o = &s->ranks[0].ops[0];
	cr_expect_eq(o->source, SNAP_SRC_OB1);
	cr_expect_eq(o->kind, SNAP_OP_RECV);
	cr_expect_eq(o->status, SNAP_ST_PENDING);
	cr_expect_str_eq(o->req_type, "iprobe");
	cr_expect_eq(o->peer_local, 1);
	cr_expect_eq(o->peer_global, 1);
	cr_expect_eq(o->tag, 9);
	cr_expect_eq(o->comm, 0);
	cr_expect_eq(o->sequence, 0, "a polling loop's sequence moves");
	free_snap(s);

	/* Not in mca_pml_ob1_iprobe: the stack is not scanned. */
	s = snap_world();
	iprobe_thread(&s->ranks[0], "mca_pml_ob1_recv");
	cr_expect_eq(ob1_collect_iprobes(lo, &fake_proc, NULL, s, &s->ranks[0]),
		     0);
	cr_expect_eq(s->ranks[0].nops, 0);
	free_snap(s);
}

/* The messages the rank sent and took in, over every peer: what tells a
 * look from the next when no request is pending at either. */
Test(ob1q, counts_the_messages_sent_and_taken_in)
{
	struct snap *s = snap_world();

	put32(PROC1 + lay("mca_pml_ob1_comm_proc_t.send_sequence"), 70000);
	put16(PROC1 + lay("mca_pml_ob1_comm_proc_t.expected_sequence"), 65535);
	cr_assert_eq(collect(s, NULL), 0);
	cr_expect(s->ranks[0].has_completions);
	cr_expect_eq(s->ranks[0].completions, 70000 + 65535);
	cr_expect_eq(s->ranks[0].nops, 0);
	free_snap(s);

	/* A torn walk gives no count: it could pass for a change. */
	s = snap_world();
	put64(PML + lay("mca_pml_ob1_comm_t.num_procs"), 1u << 30);
	cr_assert_eq(collect(s, NULL), 0);
	cr_expect(!s->ranks[0].has_completions);
	free_snap(s);
}

Test(ob1q, reads_wild_internal_probe_and_unexpected_with_peers_and_types)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	const struct snap_op *o;
	uint64_t spec[] = { REQ_INT, REQ_PROBE }, wild[] = { REQ_WILD };
	uint64_t unex[] = { FRAG_A };

	request(REQ_WILD, 2, -1, 5, 3, 7);
	request(REQ_INT, 2, 1, -12, 4, 9);	/* a collective's receive */
	request(REQ_PROBE, 4, 1, 3, 0, 0);	/* MPI_Probe */
	list_set(PML + lay("mca_pml_ob1_comm_t.wild_receives"), wild, 1);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"),
		 spec, 2);
	frag(FRAG_A, 0x41, 0, 1, 1, 3, 0);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"),
		 unex, 1);
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(st.torn, 0);
	cr_expect_eq(st.comms, 1);
	cr_assert_eq(s->ranks[0].nops, 4);
	cr_expect(s->ranks[0].unexpected_available);

	o = &s->ranks[0].ops[0];	/* the wildcard receive */
	cr_expect_eq(o->source, SNAP_SRC_OB1);
	cr_expect_eq(o->kind, SNAP_OP_RECV);
	cr_expect_str_eq(o->req_type, "recv");
	cr_expect_eq(o->peer_local, -1);
	cr_expect_eq(o->peer_global, -1);
	cr_expect_eq(o->tag, 5);
	cr_expect_eq(o->comm, 0);
	cr_expect_eq(o->request, REQ_WILD);
	cr_expect_eq(o->sequence, 7);
	cr_expect_str_eq(o->datatype, "MPI_INT");
	cr_expect_eq(o->count, 3);
	cr_expect_eq(o->length, 12);

	o = &s->ranks[0].ops[1];	/* the collective's receive */
	cr_expect_eq(o->tag, -12);
	cr_expect(!o->any_tag);
	cr_expect_eq(o->peer_local, 1);
	cr_expect_eq(o->peer_global, 1);
	cr_expect_eq(o->sequence, 9);

	o = &s->ranks[0].ops[2];	/* the probe */
	cr_expect_str_eq(o->req_type, "probe");
	cr_expect_eq(o->kind, SNAP_OP_RECV);
	cr_expect_eq(o->tag, 3);
	cr_expect_null(o->datatype);

	o = &s->ranks[0].ops[3];	/* the message that arrived */
	cr_expect_eq(o->kind, SNAP_OP_UNEXPECTED);
	cr_expect_str_eq(o->req_type, "unexpected");
	cr_expect_eq(o->peer_local, 1);
	cr_expect_eq(o->peer_global, 1);
	cr_expect_eq(o->tag, 1);
	cr_expect_eq(o->sequence, 3);
	cr_expect_eq(o->source, SNAP_SRC_OB1);
	free_snap(s);
}

/* On an intercommunicator the peer of a request or fragment is a rank
 * of the remote group: world ranks 0,1 local, 3,2 remote here. */
Test(ob1q, peers_on_an_intercommunicator_are_in_the_remote_group)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	uint64_t spec[] = { REQ_INT }, unex[] = { FRAG_A };
	int *remote;

	snap_set_nranks(s, 4);
	remote = xmalloc(2 * sizeof(int));
	remote[0] = 3;
	remote[1] = 2;
	s->comms[0].remote = remote;
	s->comms[0].remote_size = 2;
	request(REQ_INT, 2, 1, -11, 4, 9);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"),
		 spec, 1);
	frag(FRAG_A, 0x41, 0, 1, 1, 3, 0);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"),
		 unex, 1);
	cr_assert_eq(collect(s, &st), 0);
	cr_assert_eq(s->ranks[0].nops, 2);
	cr_expect_eq(s->ranks[0].ops[0].peer_local, 1);
	cr_expect_eq(s->ranks[0].ops[0].peer_global, 2);
	cr_expect_eq(s->ranks[0].ops[1].peer_global, 2);
	free_snap(s);
}

Test(ob1q, skips_requests_the_dll_showed_and_names_their_datatype)
{
	struct snap *s = snap_world();
	struct snap_rank *r = &s->ranks[0];
	uint64_t wild[] = { REQ_WILD };

	request(REQ_WILD, 2, -1, 5, 3, 7);
	list_set(PML + lay("mca_pml_ob1_comm_t.wild_receives"), wild, 1);
	r->ops = xcalloc(1, sizeof(*r->ops));
	r->nops = 1;
	r->ops[0].kind = SNAP_OP_RECV;
	r->ops[0].request = REQ_WILD;
	r->ops[0].extra[0] = snap_str(s, "Receive: 0x101000");
	r->ops[0].nextra = 1;
	cr_assert_eq(collect(s, NULL), 0);
	cr_assert_eq(r->nops, 1, "the DLL's receive came twice");
	cr_expect_str_eq(r->ops[0].datatype, "MPI_INT");
	cr_expect_eq(r->ops[0].count, 3);
	cr_expect_eq(r->ops[0].source, SNAP_SRC_DLL);
	cr_expect_str_eq(r->ops[0].extra[0], "Receive: 0x101000");
	free_snap(s);
}

Test(ob1q, rendezvous_length_and_out_of_order_ring_are_read)
{
	struct snap *s = snap_world();
	uint64_t unex[] = { FRAG_A };
	const struct snap_op *o;

	frag(FRAG_A, 0x42, 0, 1, 4, 1, 1 << 20);	/* rendezvous */
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"),
		 unex, 1);
	/* frags_cant_match: a ring without sentinel, B -> C -> B. */
	frag(FRAG_B, 0x41, 0, 1, 6, 5, 0);
	frag(FRAG_C, 0x41, 0, 1, 6, 6, 0);
	put64(FRAG_B + lay("opal_list_item_t.opal_list_next"), FRAG_C);
	put64(FRAG_C + lay("opal_list_item_t.opal_list_next"), FRAG_B);
	put64(PROC1 + lay("mca_pml_ob1_comm_proc_t.frags_cant_match"), FRAG_B);
	cr_assert_eq(collect(s, NULL), 0);
	cr_assert_eq(s->ranks[0].nops, 3);
	o = &s->ranks[0].ops[0];
	cr_expect_eq(o->length, 1 << 20);
	cr_expect_str_eq(s->ranks[0].ops[1].req_type, "cant_match");
	cr_expect_eq(s->ranks[0].ops[1].sequence, 5);
	cr_expect_eq(s->ranks[0].ops[2].sequence, 6);
	free_snap(s);
}

Test(ob1q, bounds_a_list_that_never_returns_to_its_sentinel)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	uint64_t wild = PML + lay("mca_pml_ob1_comm_t.wild_receives");
	long next = lay("opal_list_item_t.opal_list_next");

	request(REQ_WILD, 2, -1, 5, 3, 7);
	put64(wild + lay("opal_list_t.opal_list_sentinel") + next, REQ_WILD);
	put64(REQ_WILD + next, REQ_WILD);	/* a loop */
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(st.torn, 1);
	cr_expect_eq(st.posted, OB1_MAX_ITEMS);
	free_snap(s);
}

Test(ob1q, keeps_what_it_read_before_a_null_or_unreadable_link)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	uint64_t spec[] = { REQ_INT, REQ_PROBE }, wild[] = { REQ_WILD };
	long next = lay("opal_list_item_t.opal_list_next");

	request(REQ_WILD, 2, -1, 5, 3, 7);
	request(REQ_INT, 2, 1, -12, 4, 9);
	request(REQ_PROBE, 4, 1, 3, 0, 0);
	list_set(PML + lay("mca_pml_ob1_comm_t.wild_receives"), wild, 1);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"),
		 spec, 2);
	put64(REQ_WILD + next, 0);		/* torn: NULL */
	put64(REQ_INT + next, 0xdead0000);	/* torn: unmapped */
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(st.torn, 2);
	cr_assert_eq(s->ranks[0].nops, 2);
	cr_expect_eq(s->ranks[0].ops[0].request, REQ_WILD);
	cr_expect_eq(s->ranks[0].ops[1].request, REQ_INT);
	free_snap(s);
}

Test(ob1q, skips_reused_requests_and_fragments_of_another_communicator)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	uint64_t spec[] = { REQ_INT }, unex[] = { FRAG_A };

	request(REQ_INT, 1, 1, 3, 1, 1);	/* a send: not a posted one */
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"),
		 spec, 1);
	frag(FRAG_A, 0x41, 9, 1, 1, 1, 0);	/* cid 9 on cid 0's queue */
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"),
		 unex, 1);
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(s->ranks[0].nops, 0);
	cr_expect_eq(st.torn, 2);
	free_snap(s);
}

Test(ob1q, a_communicator_the_dll_did_not_list_gets_comm_minus_one)
{
	struct snap *s = snap_world();
	uint64_t unex[] = { FRAG_A };

	put32(COMM + lay("ompi_communicator_t.c_contextid"), 3);
	frag(FRAG_A, 0x41, 3, 1, 1, 1, 0);
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.unexpected_frags"),
		 unex, 1);
	cr_assert_eq(collect(s, NULL), 0);
	cr_assert_eq(s->ranks[0].nops, 1);
	cr_expect_eq(s->ranks[0].ops[0].comm, -1);
	cr_expect_eq(s->ranks[0].ops[0].peer_local, 1);
	cr_expect_eq(s->ranks[0].ops[0].peer_global, -1);
	free_snap(s);
}

Test(ob1q, process_gone_mid_walk_adds_nothing)
{
	struct snap *s = snap_world();
	uint64_t wild[] = { REQ_WILD };

	request(REQ_WILD, 2, -1, 5, 3, 7);
	list_set(PML + lay("mca_pml_ob1_comm_t.wild_receives"), wild, 1);
	refresh();
	tgt_fake_gone(tg);
	cr_expect_eq(ob1_collect(lo, &fake_proc, NULL, s, &s->ranks[0], NULL),
		     -MD_E_GONE);
	cr_expect_eq(s->ranks[0].nops, 0);
	cr_expect(!s->ranks[0].unexpected_available);
	free_snap(s);
}

Test(ob1q, a_process_without_communicators_symbol_is_not_open_mpi)
{
	struct snap *s = snap_world();

	symaddr = 0;
	cr_expect_eq(collect(s, NULL), -MD_E_NOSYM);
	cr_expect_eq(s->ranks[0].nops, 0);
	free_snap(s);
}

Test(ob1q, layout_names_the_first_missing_member)
{
	struct ob1_layout *l = NULL;
	char *missing = NULL;

	drop_name = "mca_pml_ob1_comm_proc_t.unexpected_frags";
	cr_expect_eq(ob1_layout_new(&fake_types, NULL, &l, &missing),
		     -MD_E_NOTYPES);
	cr_expect_null(l);
	cr_assert_not_null(missing);
	cr_expect_str_eq(missing, "mca_pml_ob1_comm_proc_t.unexpected_frags");
	free(missing);
}

Test(ob1q, layout_refuses_a_request_that_is_not_its_own_list_item)
{
	struct ob1_layout *l = NULL;
	char *missing = NULL;

	move_name = "ompi_request_t.super";
	cr_expect_eq(ob1_layout_new(&fake_types, NULL, &l, &missing),
		     -MD_E_NOTYPES);
	cr_assert_not_null(missing);
	cr_expect(strstr(missing, "ompi_request_t.super at offset 8"),
		  "%s", missing);
	free(missing);
}

Test(ob1q, layout_values_are_named_for_comparison)
{
	int n = ob1_layout_count();
	bool seen = false;

	cr_assert_gt(n, 30);
	for (int i = 0; i < n; i++) {
		const char *name = ob1_layout_name(i);

		cr_assert_not_null(name);
		if (!strcmp(name, "sizeof mca_pml_ob1_comm_proc_t")) {
			cr_expect_eq(ob1_layout_value(lo, i), 128);
			seen = true;
		}
	}
	cr_expect(seen);
	cr_expect_null(ob1_layout_name(n));
}

/* A free list at fl with one allocation at chunk of n requests; returns
 * the address of the first. */
static uint64_t free_list(uint64_t fl, uint64_t chunk, int n)
{
	uint64_t item = chunk + (uint64_t)lay("opal_free_list_item_t");

	put64(fl + lay("opal_free_list_t.fl_frag_size"), FRAGSZ);
	put64(fl + lay("opal_free_list_t.fl_frag_alignment"), 16);
	put64(fl + lay("opal_free_list_t.fl_num_per_alloc"), 64);
	put64(fl + lay("opal_free_list_t.fl_num_allocated"), (uint64_t)n);
	list_set(fl + lay("opal_free_list_t.fl_allocations"), &chunk, 1);
	return (item + 15) & ~15ULL;
}

static void active(uint64_t req, uint32_t state)
{
	put32(req + lay("ompi_request_t.req_type"), 0);	/* PML */
	put32(req + lay("ompi_request_t.req_state"), state);
}

Test(ob1q, internal_requests_in_progress_come_from_the_free_lists)
{
	struct snap *s = snap_world();
	struct ob1_stats st;
	uint64_t r0, snd;
	const struct snap_op *o;

	recv_fl = RFL;
	send_fl = SFL;
	r0 = free_list(RFL, RCHUNK, 3);
	request(r0, 2, 1, -12, 4, 21);		/* internal, matched */
	active(r0, 2);
	put64(r0 + lay("mca_pml_ob1_recv_request_t.req_bytes_received"), 8);
	request(r0 + FRAGSZ, 2, 1, 5, 1, 22);	/* user tag: the DLL's */
	active(r0 + FRAGSZ, 2);
	request(r0 + 2 * FRAGSZ, 2, 1, -12, 1, 23);	/* freed */
	active(r0 + 2 * FRAGSZ, 0);
	snd = free_list(SFL, SCHUNK, 1);
	request(snd, 1, 1, -17, 1 << 17, 24);	/* internal, pending */
	active(snd, 2);
	put64(snd + lay("mca_pml_ob1_send_request_t.req_bytes_delivered"),
	      4096);
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(st.internal, 2);
	cr_assert_eq(s->ranks[0].nops, 2);
	o = &s->ranks[0].ops[0];
	cr_expect_eq(o->kind, SNAP_OP_RECV);
	cr_expect_eq(o->status, SNAP_ST_MATCHED);
	cr_expect_eq(o->tag, -12);
	cr_expect_eq(o->peer_global, 1);
	cr_expect_eq(o->actual_length, 8, "bytes received so far");
	cr_expect_eq(o->sequence, 21);
	cr_expect_eq(o->source, SNAP_SRC_OB1);
	o = &s->ranks[0].ops[1];
	cr_expect_eq(o->kind, SNAP_OP_SEND);
	cr_expect_eq(o->status, SNAP_ST_PENDING);
	cr_expect_eq(o->tag, -17);
	cr_expect_eq(o->length, (1 << 17) * 4);
	cr_expect_eq(o->actual_length, 4096, "bytes delivered so far");
	cr_expect_str_eq(o->datatype, "MPI_INT");
	free_snap(s);
}

Test(ob1q, a_posted_internal_receive_is_not_taken_twice_from_the_free_list)
{
	struct snap *s = snap_world();
	uint64_t r0, spec[1];

	recv_fl = RFL;
	r0 = free_list(RFL, RCHUNK, 1);
	request(r0, 2, 1, -12, 4, 9);
	active(r0, 2);
	spec[0] = r0;
	list_set(PROC1 + lay("mca_pml_ob1_comm_proc_t.specific_receives"),
		 spec, 1);
	cr_assert_eq(collect(s, NULL), 0);
	cr_assert_eq(s->ranks[0].nops, 1);
	cr_expect_eq(s->ranks[0].ops[0].status, SNAP_ST_PENDING,
		     "posted, so not matched");
	free_snap(s);
}

Test(ob1q, an_implausible_free_list_is_not_walked)
{
	struct snap *s = snap_world();
	struct ob1_stats st;

	send_fl = SFL;
	free_list(SFL, SCHUNK, 1);
	put64(SFL + lay("opal_free_list_t.fl_num_allocated"), 1ULL << 40);
	cr_assert_eq(collect(s, &st), 0);
	cr_expect_eq(st.torn, 1);
	cr_expect_eq(s->ranks[0].nops, 0);
	free_snap(s);
}
