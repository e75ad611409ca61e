/*
 * ob1q_layout.c - the sizes and offsets ob1's walk uses, resolved once
 * per library through the types of the running Open MPI.
 */
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "ob1q_int.h"

static const struct {
	const char *type, *member, *name;
} fields[L_COUNT] = {
#define OB1_FIELD(id, type, member) { type, member, type "." member },
#define OB1_SIZE(id, type) { type, NULL, "sizeof " type },
	OB1_LAYOUT(OB1_FIELD, OB1_SIZE)
#undef OB1_FIELD
#undef OB1_SIZE
};

int ob1_layout_count(void)
{
	return L_COUNT;
}

const char *ob1_layout_name(int i)
{
	return i >= 0 && i < L_COUNT ? fields[i].name : NULL;
}

long ob1_layout_value(const struct ob1_layout *l, int i)
{
	return i >= 0 && i < L_COUNT ? l->v[i] : -1;
}

static bool must_be_zero(int i)
{
	switch (i) {
	case L_FI_SUPER_0: case L_RQ_SUPER_0: case L_RB_OMPI_0:
	case L_BR_BASE_0: case L_BS_BASE_0: case L_RR_RECV_0:
	case L_FR_SUPER_0: case L_HU_MATCH_0: case L_HU_RNDV_0:
	case L_MH_COMMON_0: case L_SR_SEND_0:
		return true;
	default:
		return false;
	}
}

static size_t max_end(const struct ob1_layout *l, const int *ids, int n)
{
	size_t end = 0;

	for (int i = 0; i < n; i++)
		if ((size_t)l->v[ids[i]] + 8 > end)
			end = (size_t)l->v[ids[i]] + 8;
	return end;
}

int ob1_layout_new(const struct mh_types_ops *types, void *ctx,
		   struct ob1_layout **out, char **missing)
{
	struct ob1_layout *l = xcalloc(1, sizeof(*l));
	static const int req_ids[] = { L_RB_TYPE, L_RB_COMM, L_RB_DTYPE,
				       L_RB_COUNT, L_RB_PEER, L_RB_TAG,
				       L_RB_SEQ, L_RR_BYTES };
	int i;

	*out = NULL;
	*missing = NULL;
	for (i = 0; i < L_COUNT; i++) {
		void *t;
		long v = -1;

		if (types->find(ctx, fields[i].type, &t) == 0)
			v = fields[i].member
				? types->offset(ctx, t, fields[i].member)
				: types->size(ctx, t);
		if (v < 0 || (must_be_zero(i) && v != 0)) {
			*missing = v < 0 ? xstrdup(fields[i].name)
					 : xasprintf("%s at offset %ld, not 0",
						     fields[i].name, v);
			free(l);
			return -MD_E_NOTYPES;
		}
		l->v[i] = v;
	}
	l->req_len = max_end(l, req_ids, 8);
	l->recv_len = max_end(l, (const int[]){ L_RQ_TYPE, L_RQ_STATE,
						L_RB_PMLDONE }, 3);
	if (l->recv_len < l->req_len)
		l->recv_len = l->req_len;
	l->send_len = max_end(l, (const int[]){ L_RQ_TYPE, L_RQ_STATE,
						L_RB_PMLDONE, L_SR_DELIVERED,
						L_RB_TYPE, L_RB_COMM,
						L_RB_DTYPE, L_RB_COUNT,
						L_RB_PEER, L_RB_TAG,
						L_RB_SEQ }, 11);
	l->frag_len = (size_t)l->v[L_FR_HDR] +
		      max_end(l, (const int[]){ L_MH_CTX, L_MH_SRC, L_MH_TAG,
						L_MH_SEQ, L_CH_TYPE,
						L_RV_LEN }, 6);
	/* The walk reads each structure into a buffer on the stack. */
	if (l->req_len > OB1_REQ_MAX || l->recv_len > OB1_REQ_MAX ||
	    l->send_len > OB1_REQ_MAX || l->frag_len > OB1_FRAG_MAX ||
	    l->v[L_PP_SIZE] > OB1_STRUCT_MAX ||
	    l->v[L_PC_SIZE] > OB1_STRUCT_MAX) {
		*missing = xstrdup("a layout within the walk's buffers (a "
				   "request, fragment or queue larger than "
				   "this Open MPI's)");
		free(l);
		return -MD_E_NOTYPES;
	}
	*out = l;
	return 0;
}

void ob1_layout_free(struct ob1_layout *l)
{
	free(l);
}
