/*
 * fakempich.c - a message-queue DLL that behaves like MPICH 4.0.2's
 * libtvmpich.so (src/mpi/debugger/dll_mpich.c, device ch3) in the ways
 * that trap a host (doc/mpich.md):
 *   - its version string starts "MPICH message queue support";
 *   - its mqs_target_type_sizes has 5 ints, and the process info goes on
 *     right after them (a canary here: a host writing Open MPI's 7 ints
 *     breaks it);
 *   - mqs_image_has_queues looks its types up by name and answers ok
 *     even when one is missing;
 *   - a communicator's unique_id is the MPIR_Comm's address (different
 *     in every rank), and there is no mqs_get_comm_group;
 *   - every global rank is -1; receives carry the local rank only;
 *   - lengths are element counts, not bytes; a send's extra_text is
 *     "Non-blocking send", a receive's is empty.
 * FAKE_MISSING_TYPE names a type it asks for that the tests do not have.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakedll.h"

#ifndef FAKE_MISSING_TYPE
#define FAKE_MISSING_TYPE "MPIR_Sendq"
#endif

/* MPICH's own struct: five ints. */
struct mpich_type_sizes {
	int short_size, int_size, long_size, long_long_size, pointer_size;
};

struct fimage {
	const struct mqd_image_callbacks *icb;
};

struct fproc {
	const struct mqd_process_callbacks *pcb;
	struct mpich_type_sizes sizes;
	int canary;		/* what follows the sizes in MPICH */
	int comm, op, cls, rank;
};

static const struct mqd_basic_callbacks *bcb;

void mqs_setup_basic_callbacks(const struct mqd_basic_callbacks *cb)
{
	bcb = cb;
}

char *mqs_version_string(void)
{
	return (char *)"MPICH message queue support for MPICH 4.0.2 compiled "
		       "on (fake)";
}

int mqs_version_compatibility(void)
{
	return 2;
}

int mqs_dll_taddr_width(void)
{
	return sizeof(mqd_taddr_t);
}

char *mqs_dll_error_string(int code)
{
	return code == 110 ? (char *)"type sizes overflowed into the process "
				     "info"
			   : (char *)"fake MPICH error";
}

int mqs_setup_image(mqd_image *image, const struct mqd_image_callbacks *cb)
{
	struct fimage *fi = bcb->malloc_fp(sizeof(*fi));

	fi->icb = cb;
	bcb->put_image_info_fp(image, (mqd_image_info *)fi);
	return MQD_OK;
}

/* As MPICH: every lookup by name, and ok whatever came back. */
int mqs_image_has_queues(mqd_image *image, char **msg)
{
	struct fimage *fi = (struct fimage *)bcb->get_image_info_fp(image);
	static const char *const types[] = { "MPIR_Comm_list", "MPIR_Comm",
					     "MPIR_Request", FAKE_MISSING_TYPE };

	*msg = (char *)"The symbols and types in the MPICH library ...";
	fi->icb->find_function_fp(image, (char *)"MPII_Wait_for_debugger",
				  MQD_LANG_C, NULL);
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		mqd_type *t = fi->icb->find_type_fp(image, (char *)types[i],
						    MQD_LANG_C);

		if (t)
			fi->icb->field_offset_fp(t, (char *)"context_id");
	}
	return MQD_OK;
}

void mqs_destroy_image_info(mqd_image_info *info)
{
	bcb->free_fp(info);
}

int mqs_setup_process(mqd_process *p, const struct mqd_process_callbacks *cb)
{
	struct fproc *fp = bcb->malloc_fp(sizeof(*fp));
	struct fimage *fi;

	memset(fp, 0, sizeof(*fp));
	fp->pcb = cb;
	fp->canary = 0x5a5a5a5a;
	fp->rank = cb->get_global_rank_fp(p);
	fi = (struct fimage *)bcb->get_image_info_fp(cb->get_image_fp(p));
	fi->icb->get_type_sizes_fp(p, (struct mqd_target_type_sizes *)&fp->sizes);
	bcb->put_process_info_fp(p, (mqd_process_info *)fp);
	return MQD_OK;
}

void mqs_destroy_process_info(mqd_process_info *info)
{
	bcb->free_fp(info);
}

int mqs_process_has_queues(mqd_process *p, char **msg)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	*msg = NULL;
	if (fp->canary != 0x5a5a5a5a || fp->sizes.pointer_size != 8)
		return 110;
	return MQD_OK;
}

int mqs_update_communicator_list(mqd_process *p)
{
	(void)p;
	return MQD_OK;
}

int mqs_setup_communicator_iterator(mqd_process *p)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	fp->comm = 0;
	return MQD_OK;
}

/* One communicator, MPI_COMM_WORLD of 3, at an address of the rank's own
 * (0x7000 + 0x100 * rank); FAKE_MPICH_COMM_NAME, if set, is its name. */
int mqs_get_communicator(mqd_process *p, struct mqd_communicator *c)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	memset(c, 0, sizeof(*c));
	c->unique_id = 0x7000 + 0x100 * (mqd_taddr_t)fp->rank;
	c->size = 3;
	/* mqd_mpich_test.c places local rank l at world rank (l + 1) % 3. */
	c->local_rank = (fp->rank + 2) % 3;
	snprintf(c->name, sizeof(c->name), "%s",
		 getenv("FAKE_MPICH_COMM_NAME") ? getenv("FAKE_MPICH_COMM_NAME")
						: "MPI_COMM_WORLD");
	return MQD_OK;
}

int mqs_next_communicator(mqd_process *p)
{
	(void)p;
	return MQD_END_OF_LIST;
}

int mqs_setup_operation_iterator(mqd_process *p, int cls)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	fp->op = 0;
	fp->cls = cls;
	return MQD_OK;
}

/*
 * Rank r: a receive from local rank (r + 2) % 3, tag 7, 5 elements; a
 * nonblocking send to (r + 1) % 3, tag 9, 3 elements; an unexpected
 * message from (r + 1) % 3 with tag 1.  Global ranks -1 throughout.
 * With FAKE_MPICH_ANY_SOURCE set the receive is from any source, and its
 * actual source is what MPICH's DLL gives for a receive not matched:
 * the status' MPI_ANY_SOURCE, -2.
 */
int mqs_next_operation(mqd_process *p, struct mqd_pending_operation *op)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);
	int peer;

	if (fp->op++ > 0)
		return MQD_END_OF_LIST;
	peer = fp->cls == MQD_PENDING_RECEIVES ? (fp->rank + 2) % 3
					       : (fp->rank + 1) % 3;
	op->status = MQD_ST_PENDING;
	op->desired_local_rank = peer;
	op->desired_global_rank = -1;
	op->actual_local_rank = peer;
	op->actual_global_rank = -1;
	if (fp->cls == MQD_PENDING_RECEIVES && getenv("FAKE_MPICH_ANY_SOURCE"))
		op->desired_local_rank = op->actual_local_rank = -2;
	op->tag_wild = 0;
	op->desired_tag = fp->cls == MQD_PENDING_SENDS ? 9 :
			  fp->cls == MQD_PENDING_RECEIVES ? 7 : 1;
	op->actual_tag = op->desired_tag;
	op->desired_length = fp->cls == MQD_PENDING_SENDS ? 3 : 5;
	op->actual_length = fp->cls == MQD_PENDING_SENDS ? 3 : -1;
	op->buffer = 0xbeef0000;
	if (fp->cls == MQD_PENDING_SENDS)
		strcpy(op->extra_text[0], "Non-blocking send");
	return MQD_OK;
}
