/*
 * snap_ob1_test.c - what ob1's walk adds to an op (source, type, full
 * datatype name and count, sequence) survives the snapshot file, and a
 * file without it reads as the DLL's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "snap.h"
#include "support/snapbuild.h"


Test(snap_ob1, source_type_datatype_and_seq_round_trip)
{
	struct snap *s = snap_new(), *back;
	int group[2] = { 0, 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	snap_set_nranks(s, 2);
	snap_comm_intern(s, 0, "MPI_COMM_WORLD", 2, group);
	s->ranks[1].ops = xcalloc(2, sizeof(struct snap_op));
	s->ranks[1].nops = 2;
	s->ranks[1].ops[0] = (struct snap_op){
		.kind = SNAP_OP_RECV, .comm = 0, .peer_local = 0,
		.peer_global = 0, .tag = 2, .datatype = snap_str(s, "MPI_DOUBLE"),
		.count = 8, .length = 64, .actual_local = -1,
		.actual_global = -1, .extra = { snap_str(s, "MPI_") },
		.nextra = 1,
	};
	s->ranks[1].ops[1] = (struct snap_op){
		.kind = SNAP_OP_UNEXPECTED, .comm = 0, .peer_local = 0,
		.peer_global = 0, .tag = 1, .source = SNAP_SRC_OB1,
		.req_type = snap_str(s, "unexpected"), .sequence = 3,
		.actual_local = 0, .actual_global = 0, .actual_tag = 1,
	};
	f = open_memstream(&buf, &len);
	cr_assert_eq(snap_write(s, f), 0);
	fclose(f);
	cr_expect(strstr(buf, "\"source\":\"ob1\""), "%s", buf);
	back = sb_read_text(buf);
	cr_assert_eq(back->ranks[1].nops, 2);
	cr_expect_eq(back->ranks[1].ops[0].source, SNAP_SRC_DLL);
	cr_expect_str_eq(back->ranks[1].ops[0].datatype, "MPI_DOUBLE");
	cr_expect_eq(back->ranks[1].ops[0].count, 8);
	cr_expect_str_eq(back->ranks[1].ops[0].extra[0], "MPI_",
			 "the DLL's extra_text is kept as it was");
	cr_expect_null(back->ranks[1].ops[0].req_type);
	cr_expect_eq(back->ranks[1].ops[1].source, SNAP_SRC_OB1);
	cr_expect_str_eq(back->ranks[1].ops[1].req_type, "unexpected");
	cr_expect_eq(back->ranks[1].ops[1].sequence, 3);
	snap_free(back);
	snap_free(s);
	free(buf);
}

Test(snap_ob1, unknown_source_is_one_located_error)
{
	const char *text =
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"nranks\":1,\"ncomms\":0}\n"
		"{\"rank\":0,\"ops\":[{\"kind\":\"recv\",\"source\":\"x\"}]}\n";
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct snap *s = NULL;

	cr_assert_not_null(f);
	cr_expect_eq(snap_read(f, "test", &s), -MD_E_INPUT);
	cr_expect_null(s);
	fclose(f);
}
