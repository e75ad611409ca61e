/*
 * fakedll.c - a message-queue DLL for the host's unit tests.  It behaves
 * like Open MPI 4.1.4's libompi_dbg_msgq.so in the ways that trap a host:
 * NULL out-pointers to find_function/find_symbol, ranks and tags as
 * unsigned 32-bit values, receives that never write actual_*, requests
 * being waited on reported "complete", no unexpected queue, and a
 * communicator list that is only right after mqs_update_communicator_list.
 *
 * Built as a shared object by the Makefile; FAKE_COMPAT sets the reported
 * interface version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakedll.h"

#ifndef FAKE_COMPAT
#define FAKE_COMPAT 2
#endif

static const struct mqd_basic_callbacks *bcb;

struct fimage {
	const struct mqd_image_callbacks *icb;
	int req_complete_off;
};

struct fproc {
	const struct mqd_process_callbacks *pcb;
	int updated;		/* update_communicator_list since setup */
	int comm;		/* iterator */
	int op;
	int cls;
	int rank;
	struct mqd_target_type_sizes sizes;
};

void mqs_setup_basic_callbacks(const struct mqd_basic_callbacks *cb)
{
	bcb = cb;
}

char *mqs_version_string(void)
{
	/* Open MPI's own opening words: the host tells the implementation
	 * by them (7 type sizes). */
	return (char *)"Open MPI message queue support for parallel "
		       "debuggers (fake DLL 1.0)";
}

int mqs_version_compatibility(void)
{
	return FAKE_COMPAT;
}

int mqs_dll_taddr_width(void)
{
	return sizeof(mqd_taddr_t);
}

char *mqs_dll_error_string(int code)
{
	return code == 101 ? (char *)"communicator list is stale"
			   : (char *)"fake error";
}

int mqs_setup_image(mqd_image *image, const struct mqd_image_callbacks *cb)
{
	struct fimage *fi = bcb->malloc_fp(sizeof(*fi));
	mqd_type *t;

	fi->icb = cb;
	t = cb->find_type_fp(image, (char *)"ompi_request_t", MQD_LANG_C);
	fi->req_complete_off = t ? cb->field_offset_fp(t, (char *)"req_complete")
				 : -1;
	bcb->put_image_info_fp(image, (mqd_image_info *)fi);
	return MQD_OK;
}

int mqs_image_has_queues(mqd_image *image, char **msg)
{
	struct fimage *fi = (struct fimage *)bcb->get_image_info_fp(image);

	/* Open MPI's checks, with NULL out-pointers. */
	fi->icb->find_function_fp(image, (char *)"ompi_debugger_setup_dlls",
				  MQD_LANG_C, NULL);
	if (fi->icb->find_symbol_fp(image, (char *)"MPIR_Ignore_queues",
				    NULL) == MQD_OK) {
		*msg = (char *)"MPIR_Ignore_queues is set";
		return 102;
	}
	if (fi->req_complete_off < 0) {
		*msg = (char *)"missing type ompi_request_t";
		return 104;
	}
	*msg = NULL;
	return MQD_OK;
}

void mqs_destroy_image_info(mqd_image_info *info)
{
	bcb->free_fp(info);
}

int mqs_setup_process(mqd_process *p, const struct mqd_process_callbacks *cb)
{
	struct fproc *fp = bcb->malloc_fp(sizeof(*fp));

	memset(fp, 0, sizeof(*fp));
	fp->pcb = cb;
	fp->rank = cb->get_global_rank_fp(p);
	/* As Open MPI's mqs_setup_process: all seven sizes. */
	{
		mqd_image *image = cb->get_image_fp(p);
		struct fimage *fi = (struct fimage *)bcb->get_image_info_fp(image);

		fi->icb->get_type_sizes_fp(p, &fp->sizes);
	}
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
	mqd_image *image = fp->pcb->get_image_fp(p);
	struct fimage *fi = (struct fimage *)bcb->get_image_info_fp(image);
	mqd_taddr_t a;

	if (fp->sizes.size_t_size != 8 || fp->sizes.bool_size != 1) {
		*msg = (char *)"type sizes not filled";
		return 103;
	}
	if (fi->icb->find_symbol_fp(image, (char *)"ompi_mpi_communicators",
				    &a) != MQD_OK) {
		*msg = (char *)"no ompi_mpi_communicators";
		return 105;
	}
	if (fp->pcb->fetch_data_fp(p, a, 8, &a) != MQD_OK) {
		*msg = (char *)"cannot read ompi_mpi_communicators";
		return 107;
	}
	return MQD_OK;
}

int mqs_update_communicator_list(mqd_process *p)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	fp->updated = 1;
	return MQD_OK;
}

int mqs_setup_communicator_iterator(mqd_process *p)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	fp->comm = 0;
	/* Open MPI's list is empty until it is refreshed. */
	return fp->updated ? MQD_OK : MQD_END_OF_LIST;
}

/* Two communicators: world (size 2, id 0) and NULL (size 0). */
int mqs_get_communicator(mqd_process *p, struct mqd_communicator *c)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	memset(c, 0, sizeof(*c));
	c->unique_id = (mqd_taddr_t)fp->comm;
	c->size = fp->comm == 0 ? 2 : 0;
	c->local_rank = fp->rank;
	strcpy(c->name, fp->comm == 0 ? "MPI_COMM_WORLD" : "MPI_COMM_NULL");
	return MQD_OK;
}

int mqs_get_comm_group(mqd_process *p, int *group)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	if (fp->comm != 0)
		return 106;
	group[0] = 0;
	group[1] = 1;
	return MQD_OK;
}

int mqs_next_communicator(mqd_process *p)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	return ++fp->comm < 2 ? MQD_OK : MQD_END_OF_LIST;
}

int mqs_setup_operation_iterator(mqd_process *p, int cls)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	fp->op = 0;
	fp->cls = cls;
	return cls == MQD_UNEXPECTED_MESSAGES ? MQD_NO_INFORMATION : MQD_OK;
}

/*
 * World has: one pending send to rank 1, tag 7, 4096 bytes, whose request
 * (0x1000) reads as "complete"; one receive from MPI_ANY_SOURCE with
 * MPI_ANY_TAG (as unsigned 32-bit) whose request is 0x2000, also
 * "complete"; it writes no actual_* fields (with FAKE_MATCHED_RECV set:
 * "matched", from rank 1 with tag 3).
 */
int mqs_next_operation(mqd_process *p, struct mqd_pending_operation *op)
{
	struct fproc *fp = (struct fproc *)bcb->get_process_info_fp(p);

	if (fp->comm != 0 || fp->op++ > 0 || fp->cls == MQD_UNEXPECTED_MESSAGES)
		return MQD_END_OF_LIST;
	op->status = MQD_ST_COMPLETE;
	op->system_buffer = 0;
	op->extra_text[1][0] = 0;
	if (fp->cls == MQD_PENDING_SENDS) {
		op->desired_local_rank = 1;
		op->desired_global_rank = 1;
		op->desired_tag = 7;
		op->desired_length = 4096;
		op->buffer = 0xdead0000;
		op->actual_local_rank = 1;
		op->actual_global_rank = 1;
		op->actual_tag = 7;
		op->actual_length = 4096;
		strcpy(op->extra_text[0], "Send: 0x1000");
		strcpy(op->extra_text[1], "Data: 4096 instances of MPI datatype");
		strcpy(op->extra_text[2], "MPI_");
		op->extra_text[3][0] = 0;
	} else {
		op->desired_local_rank = 4294967295UL;
		op->desired_global_rank = 4294967295UL;
		op->tag_wild = 1;
		op->desired_tag = 4294967295UL;
		op->desired_length = 64;
		op->buffer = 0xbeef0000;
		strcpy(op->extra_text[0], "Receive: 0x2000");
		/* As Open MPI's DLL says of a receive whose status has a tag:
		 * matched, whether its message is in transfer or all in. */
		if (getenv("FAKE_MATCHED_RECV")) {
			op->status = MQD_ST_MATCHED;
			op->actual_local_rank = 1;
			op->actual_global_rank = 1;
			op->actual_tag = 3;
			op->actual_length = 64;
		}
	}
	return MQD_OK;
}
