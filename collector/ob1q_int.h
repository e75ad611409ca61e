/*
 * ob1q_int.h - private to the ob1 walk (ob1q_layout.c: the layout;
 * ob1q.c: the matching queues; ob1q_free.c: the request free lists).
 */
#ifndef MD_OB1Q_INT_H
#define MD_OB1Q_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ob1q.h"

/*
 * Every size and offset the walk uses: X(id, type, member) an offset,
 * S(id, type) a sizeof.  The *_0 entries are members the walk takes to be at
 * offset 0 (a request or fragment is its own list item); the layout is
 * refused when one is not.
 */
#define OB1_LAYOUT(X, S)                                                  \
	X(PA_ADDR, "opal_pointer_array_t", "addr")                        \
	X(PA_SIZE, "opal_pointer_array_t", "size")                        \
	X(CM_CID, "ompi_communicator_t", "c_contextid")                   \
	X(CM_PML, "ompi_communicator_t", "c_pml_comm")                    \
	X(PC_WILD, "mca_pml_ob1_comm_t", "wild_receives")                 \
	X(PC_PROCS, "mca_pml_ob1_comm_t", "procs")                        \
	X(PC_NPROCS, "mca_pml_ob1_comm_t", "num_procs")                   \
	S(PC_SIZE, "mca_pml_ob1_comm_t")                                  \
	X(PP_EXPSEQ, "mca_pml_ob1_comm_proc_t", "expected_sequence")      \
	X(PP_SENDSEQ, "mca_pml_ob1_comm_proc_t", "send_sequence")         \
	X(PP_CANT, "mca_pml_ob1_comm_proc_t", "frags_cant_match")         \
	X(PP_SPEC, "mca_pml_ob1_comm_proc_t", "specific_receives")        \
	X(PP_UNEX, "mca_pml_ob1_comm_proc_t", "unexpected_frags")         \
	S(PP_SIZE, "mca_pml_ob1_comm_proc_t")                             \
	X(LS_SENT, "opal_list_t", "opal_list_sentinel")                   \
	X(LI_NEXT, "opal_list_item_t", "opal_list_next")                  \
	X(FI_SUPER_0, "opal_free_list_item_t", "super")                   \
	X(RQ_SUPER_0, "ompi_request_t", "super")                          \
	X(RB_OMPI_0, "mca_pml_base_request_t", "req_ompi")                \
	X(RB_TYPE, "mca_pml_base_request_t", "req_type")                  \
	X(RB_COMM, "mca_pml_base_request_t", "req_comm")                  \
	X(RB_DTYPE, "mca_pml_base_request_t", "req_datatype")             \
	X(RB_COUNT, "mca_pml_base_request_t", "req_count")                \
	X(RB_PEER, "mca_pml_base_request_t", "req_peer")                  \
	X(RB_TAG, "mca_pml_base_request_t", "req_tag")                    \
	X(RB_SEQ, "mca_pml_base_request_t", "req_sequence")               \
	X(BR_BASE_0, "mca_pml_base_recv_request_t", "req_base")           \
	X(BS_BASE_0, "mca_pml_base_send_request_t", "req_base")           \
	X(RR_RECV_0, "mca_pml_ob1_recv_request_t", "req_recv")            \
	X(RR_BYTES, "mca_pml_ob1_recv_request_t", "req_bytes_received")   \
	X(FR_SUPER_0, "mca_pml_ob1_recv_frag_t", "super")                 \
	X(FR_HDR, "mca_pml_ob1_recv_frag_t", "hdr")                       \
	X(HU_MATCH_0, "mca_pml_ob1_hdr_t", "hdr_match")                   \
	X(HU_RNDV_0, "mca_pml_ob1_hdr_t", "hdr_rndv")                     \
	X(MH_COMMON_0, "mca_pml_ob1_match_hdr_t", "hdr_common")           \
	X(MH_CTX, "mca_pml_ob1_match_hdr_t", "hdr_ctx")                   \
	X(MH_SRC, "mca_pml_ob1_match_hdr_t", "hdr_src")                   \
	X(MH_TAG, "mca_pml_ob1_match_hdr_t", "hdr_tag")                   \
	X(MH_SEQ, "mca_pml_ob1_match_hdr_t", "hdr_seq")                   \
	X(CH_TYPE, "mca_pml_ob1_common_hdr_t", "hdr_type")                \
	X(RV_LEN, "mca_pml_ob1_rendezvous_hdr_t", "hdr_msg_length")       \
	X(FL_ALLOCS, "opal_free_list_t", "fl_allocations")                \
	X(FL_FRAGSZ, "opal_free_list_t", "fl_frag_size")                  \
	X(FL_ALIGN, "opal_free_list_t", "fl_frag_alignment")              \
	X(FL_PERALLOC, "opal_free_list_t", "fl_num_per_alloc")            \
	X(FL_NALLOC, "opal_free_list_t", "fl_num_allocated")              \
	S(FI_SIZE, "opal_free_list_item_t")                               \
	X(RQ_TYPE, "ompi_request_t", "req_type")                          \
	X(RQ_STATE, "ompi_request_t", "req_state")                        \
	X(RB_PMLDONE, "mca_pml_base_request_t", "req_pml_complete")       \
	X(SR_SEND_0, "mca_pml_ob1_send_request_t", "req_send")            \
	X(SR_DELIVERED, "mca_pml_ob1_send_request_t", "req_bytes_delivered") \
	X(DT_SUPER, "ompi_datatype_t", "super")                           \
	X(DT_NAME, "ompi_datatype_t", "name")                             \
	X(OD_SIZE, "opal_datatype_t", "size")

enum {
#define OB1_ENUM(id, type, member) L_##id,
#define OB1_SENUM(id, type) L_##id,
	OB1_LAYOUT(OB1_ENUM, OB1_SENUM)
#undef OB1_ENUM
#undef OB1_SENUM
	L_COUNT
};

struct ob1_layout {
	long v[L_COUNT];
	/* Bytes to read of a request (posted, and from the free lists: a
	 * receive, a send) and of a fragment: up to the last member used. */
	size_t req_len, recv_len, send_len, frag_len;
};

/* MPI request types (mca_pml_base_request_type_t) and header types. */
enum { RT_SEND = 1, RT_RECV, RT_IPROBE, RT_PROBE, RT_IMPROBE, RT_MPROBE };
enum { HT_MATCH = 0x41, HT_RNDV = 0x42, HT_RGET = 0x43 };
#define DT_NAME_MAX 64		/* ompi_datatype_t.name is char[64] */
/* Buffer sizes of the walk's reads (Open MPI 4.1 needs about half). */
#define OB1_REQ_MAX 1024
#define OB1_FRAG_MAX 256
#define OB1_STRUCT_MAX 512

/* A datatype seen in this walk: most requests share a few. */
struct ob1_dtname {
	uint64_t addr;
	const char *name;	/* interned; NULL: unreadable */
	uint64_t size;
};

struct ob1_walk {
	const struct ob1_layout *l;
	const struct mh_proc_ops *proc;
	void *ctx;
	struct snap *s;
	struct snap_rank *r;
	struct ob1_stats st;
	struct snap_op *ops;	/* new ops, appended to r at the end */
	int nops, cap;
	struct ob1_dtname dt[16];
	int ndt;
	bool gone;
	/* Messages the rank sent and messages it took in, in order, over
	 * every communicator and peer (each peer's send_sequence and
	 * expected_sequence): it changes when the rank's MPI moves data,
	 * though no request is pending at either look. */
	uint64_t moved;
	/* The communicator being walked. */
	uint32_t cid;
	int comm;		/* snapshot index, -1 unknown */
};

/* Values at byte offset off of a structure read into b. */
static inline uint64_t ob1_u64(const unsigned char *b, long off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static inline uint32_t ob1_u32(const unsigned char *b, long off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static inline uint16_t ob1_u16(const unsigned char *b, long off)
{
	uint16_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* Read len bytes at addr (0 is unreadable); marks the walk gone. */
int ob1w_read(struct ob1_walk *w, uint64_t addr, void *buf, size_t len);
/* The datatype at addr (its name interned, NULL if unreadable). */
const struct ob1_dtname *ob1w_datatype(struct ob1_walk *w, uint64_t addr);
/* A new op of the walk, source ob1, on the communicator being walked. */
struct snap_op *ob1w_new_op(struct ob1_walk *w);
/* Global rank of local rank local in the communicator walked, or -1. */
int ob1w_global_of(const struct ob1_walk *w, int local);
/* Did the DLL show the request at req? */
bool ob1w_dll_has(const struct snap_rank *r, uint64_t req);
/* The snapshot's communicator of context id cid among the rank's, -1. */
int ob1w_comm_of(const struct ob1_walk *w, uint32_t cid);
/* Internal requests in progress from the free list at symbol sym. */
void ob1w_walk_free_list(struct ob1_walk *w, const char *sym, bool send);
/* A new pending receive-side op (source, tag, type name) from the
 * request read into b at req, on w->comm. */
struct snap_op *ob1w_probe_op(struct ob1_walk *w, const unsigned char *b,
			      uint64_t req);
/* The snapshot communicator of the request read into b: its index, -1
 * if r is not a member the DLL listed, -2 if unreadable. */
int ob1w_req_comm(struct ob1_walk *w, const unsigned char *b);
/* Append the walk's new ops to its rank's. */
void ob1w_append_ops(struct ob1_walk *w);

#endif /* MD_OB1Q_INT_H */
