/* snap_test.c - the snapshot object: interning, communicators, ranks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap.h"

Test(snap, new_snapshot_is_empty_with_current_version)
{
	struct snap *s = snap_new();

	cr_assert_eq(s->version, SNAP_VERSION);
	cr_assert_eq(s->nranks, 0);
	cr_assert_eq(s->ncomms, 0);
	cr_assert_eq(s->nnotes, 0);
	cr_assert_null(s->ranks);
	snap_free(s);
}

Test(snap, free_of_null_does_nothing)
{
	snap_free(NULL);
}

Test(snap, str_returns_one_copy_for_equal_strings)
{
	struct snap *s = snap_new();
	char a[] = "ring.c", b[] = "ring.c";
	const char *x = snap_str(s, a), *y = snap_str(s, b);

	cr_assert_eq(x, y);
	cr_assert_neq(x, a);
	cr_assert_str_eq(x, "ring.c");
	cr_assert_neq(snap_str(s, "ring.h"), x);
	cr_assert_null(snap_str(s, NULL));
	cr_assert_str_eq(snap_str(s, ""), "");
	snap_free(s);
}

Test(snap, str_keeps_all_strings_across_table_growth)
{
	struct snap *s = snap_new();
	const char *first[5000];
	char buf[32];

	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "host%04d", i);
		first[i] = snap_str(s, buf);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "host%04d", i);
		cr_assert_eq(snap_str(s, buf), first[i], "string %d moved", i);
		cr_assert_str_eq(first[i], buf);
	}
	snap_free(s);
}

Test(snap, str_holds_strings_longer_than_a_pool_chunk)
{
	struct snap *s = snap_new();
	size_t n = 200 * 1024;
	char *big = malloc(n + 1);
	const char *small = snap_str(s, "before");

	memset(big, 'x', n);
	big[n] = '\0';
	cr_assert_eq(strlen(snap_str(s, big)), n);
	cr_assert_eq(snap_str(s, big), snap_str(s, big));
	cr_assert_str_eq(small, "before");
	cr_assert_str_eq(snap_str(s, "after"), "after");
	free(big);
	snap_free(s);
}

Test(snap, note_formats_and_keeps_order)
{
	struct snap *s = snap_new();

	for (int i = 0; i < 20; i++)
		snap_note(s, "note %d of %s", i, "twenty");
	cr_assert_eq(s->nnotes, 20);
	cr_assert_str_eq(s->notes[0], "note 0 of twenty");
	cr_assert_str_eq(s->notes[19], "note 19 of twenty");
	snap_free(s);
}

Test(snap, set_nranks_numbers_ranks_and_zeroes_them)
{
	struct snap *s = snap_new();

	snap_set_nranks(s, 4);
	s->ranks[3].nops = 1;
	s->ranks[3].ops = calloc(1, sizeof(struct snap_op));
	snap_set_nranks(s, 2);
	snap_set_nranks(s, 5);
	cr_assert_eq(s->nranks, 5);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(s->ranks[i].rank, i);
		cr_assert_eq(s->ranks[i].nops, 0);
		cr_assert_null(s->ranks[i].ops);
		cr_assert_eq(s->ranks[i].state, SNAP_RANK_COLLECTED);
	}
	snap_free(s);
}

Test(snap, comm_intern_merges_same_id_name_and_group)
{
	struct snap *s = snap_new();
	int g1[] = { 0, 1, 2, 3 }, g2[] = { 0, 1, 2, 3 }, g3[] = { 0, 2 };
	int a = snap_comm_intern(s, 0, "MPI_COMM_WORLD", 4, g1);
	int b = snap_comm_intern(s, 0, "MPI_COMM_WORLD", 4, g2);
	int c = snap_comm_intern(s, 3, "", 2, g3);
	int d = snap_comm_intern(s, 3, NULL, 2, g3);

	cr_assert_eq(a, 0);
	cr_assert_eq(b, 0);
	cr_assert_eq(c, 1);
	cr_assert_eq(d, 1, "a NULL name is the empty name");
	cr_assert_eq(s->ncomms, 2);
	cr_assert_neq(s->comms[0].group, g1, "the group is copied");
	cr_assert_eq(s->comms[1].group[1], 2);
	snap_free(s);
}

Test(snap, comm_intern_keeps_apart_what_differs)
{
	struct snap *s = snap_new();
	int g[] = { 0, 1 }, h[] = { 1, 0 };

	cr_assert_eq(snap_comm_intern(s, 5, "a", 2, g), 0);
	cr_assert_eq(snap_comm_intern(s, 5, "a", 2, h), 1, "other order");
	cr_assert_eq(snap_comm_intern(s, 6, "a", 2, g), 2, "other id");
	cr_assert_eq(snap_comm_intern(s, 5, "b", 2, g), 3, "other name");
	cr_assert_eq(snap_comm_intern(s, 5, "a", 2, NULL), 4, "no group");
	cr_assert_eq(snap_comm_intern(s, 5, "a", 2, NULL), 4);
	cr_assert_null(s->comms[4].group);
	snap_free(s);
}

Test(snap, comm_intern_finds_each_of_many_communicators)
{
	struct snap *s = snap_new();
	int g[1];

	for (int i = 0; i < 3000; i++) {
		g[0] = i;
		cr_assert_eq(snap_comm_intern(s, (uint64_t)i, "", 1, g), i);
	}
	for (int i = 2999; i >= 0; i--) {
		g[0] = i;
		cr_assert_eq(snap_comm_intern(s, (uint64_t)i, "", 1, g), i);
	}
	cr_assert_eq(s->ncomms, 3000);
	snap_free(s);
}

Test(snap, names_match_the_file_format)
{
	cr_assert_str_eq(snap_state_name(SNAP_RANK_COLLECTED), "collected");
	cr_assert_str_eq(snap_state_name(SNAP_RANK_GONE), "gone");
	cr_assert_str_eq(snap_state_name(SNAP_RANK_UNREAD), "unread");
	cr_assert_str_eq(snap_state_name(SNAP_RANK_REMOTE), "remote");
	cr_assert_str_eq(snap_progress_name(SNAP_PROGRESS_UNKNOWN), "unknown");
	cr_assert_str_eq(snap_progress_name(SNAP_PROGRESS_STABLE), "stable");
	cr_assert_str_eq(snap_progress_name(SNAP_PROGRESS_CHANGED), "changed");
	cr_assert_str_eq(snap_op_kind_name(SNAP_OP_SEND), "send");
	cr_assert_str_eq(snap_op_kind_name(SNAP_OP_RECV), "recv");
	cr_assert_str_eq(snap_op_kind_name(SNAP_OP_UNEXPECTED), "unexpected");
	cr_assert_str_eq(snap_status_name(SNAP_ST_PENDING), "pending");
	cr_assert_str_eq(snap_status_name(SNAP_ST_MATCHED), "matched");
	cr_assert_str_eq(snap_status_name(SNAP_ST_COMPLETE), "complete");
	cr_assert_str_eq(snap_status_name((enum snap_op_status)42), "?");
}

/* Every value of each enum up to its _LAST has a name, and the list ends
 * right after it (the reader stops at the first NULL). */
Test(snap, every_enum_value_has_a_name_in_its_list)
{
	static const struct {
		const char *const *names;
		int last;
	} lists[] = {
		{ snap_state_names, SNAP_RANK_STATE_LAST },
		{ snap_progress_names, SNAP_PROGRESS_LAST },
		{ snap_op_kind_names, SNAP_OP_KIND_LAST },
		{ snap_status_names, SNAP_ST_LAST },
		{ snap_source_names, SNAP_SRC_LAST },
		{ snap_topo_names, SNAP_TOPO_LAST },
		{ snap_track_kind_names, SNAP_TRACK_KIND_LAST },
	};

	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		for (int i = 0; i <= lists[l].last; i++)
			cr_assert_not_null(lists[l].names[i], "list %zu, value %d",
					   l, i);
		cr_assert_null(lists[l].names[lists[l].last + 1], "list %zu", l);
	}
}
