/*
 * e2e_ob1_test.c - what ob1's own queues add to the snapshot, on real
 * jobs under real mpirun, once per Open MPI setup (Debian's stripped
 * build through the ob1 type provider, and the -g build through
 * mca_pml_ob1.so's DWARF): a rank in MPI_Probe (its request lives on the
 * stack, the DLL never shows it), a collective whose members disagree on
 * the root (the negative-tag internal receives the DLL hides), and a
 * message that arrived and is unmatched (the unexpected queue the DLL
 * cannot show), with the full datatype name beside the DLL's own text.
 *
 * Each test's job is ended by pid in the .fini hook (mpijob.c).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "snap.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define OMPI_G "/var/cache/mpi-deadlock/openmpi-4.1.4-g"
#define MARKER_TIMEOUT_MS 90000
#define TOOL_TIMEOUT_MS 120000

static struct mj_job *job;
static char *dir;
static const char *looks = "2";	/* --looks */

static void fini(void)
{
	mj_end(job);
	job = NULL;
	mj_tmpdir_end(&dir);
	looks = "2";
}

/* Run the sample name of setup on np ranks, attach once every rank is
 * in place, and read back the snapshot the tool wrote. */
static struct snap *collect(const char *setup, const char *name, int np)
{
	const char *bin = getenv("MD_BIN"), *build = getenv("MD_BUILD");
	char pid[16];
	char *prog, *snap_path, *out, *err;
	struct snap *s = NULL;
	FILE *f;
	int st;

	if (!bin || access(bin, X_OK))
		cr_skip_test("MD_BIN is not an executable (run through make)");
	prog = xasprintf("%s/samples/%s/%s", build ? build : "build", setup,
			 name);
	if (access(prog, X_OK))
		cr_skip_test("%s is not built (make samples%s)", prog,
			     strcmp(setup, "ompi-g") ? "" : "; needs "
			     "scripts/build-openmpi.sh done");
	cr_assert_not_null(dir = mj_tmpdir("e2e-ob1"));
	job = mj_start(strcmp(setup, "ompi-g") ? "mpirun"
					       : OMPI_G "/bin/mpirun",
		       prog, np, dir);
	cr_assert_not_null(job);
	cr_assert_eq(mj_wait_lines(job, "MD-", np, MARKER_TIMEOUT_MS), 0,
		     "the job's markers never came");
	usleep(500 * 1000);
	snprintf(pid, sizeof(pid), "%d", (int)job->pid);
	snap_path = xasprintf("%s/snap.jsonl", dir);
	out = xasprintf("%s/tool.out", dir);
	err = xasprintf("%s/tool.err", dir);
	char *argv[] = { (char *)bin, (char *)"--attach", pid,
			 (char *)"--looks", (char *)looks,
			 (char *)"--snapshot", snap_path, NULL };
	st = rp_wait_status(rp_spawn(argv, NULL, out, err), TOOL_TIMEOUT_MS);
	cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) <= 2,
		  "the tool failed (status 0x%x); its stderr is in %s", st,
		  err);
	f = fopen(snap_path, "r");
	cr_assert_not_null(f, "no snapshot written");
	cr_assert_eq(snap_read(f, snap_path, &s), 0);
	fclose(f);
	free(snap_path);
	free(out);
	free(err);
	free(prog);
	return s;
}

static int world(const struct snap *s)
{
	for (int c = 0; c < s->ncomms; c++)
		if (s->comms[c].name && !strcmp(s->comms[c].name,
						"MPI_COMM_WORLD"))
			return c;
	cr_assert_fail("no MPI_COMM_WORLD in the snapshot");
	return -1;
}

static int count_ob1(const struct snap_rank *r)
{
	int n = 0;

	for (int k = 0; k < r->nops; k++)
		n += r->ops[k].source == SNAP_SRC_OB1;
	return n;
}

/* Has r an ob1 probe of type type for tag from global rank peer on
 * communicator comm? */
static bool has_probe(const struct snap_rank *r, const char *type, int tag,
		      int peer, int comm)
{
	for (int k = 0; k < r->nops; k++) {
		const struct snap_op *o = &r->ops[k];

		if (o->source == SNAP_SRC_OB1 && o->req_type &&
		    !strcmp(o->req_type, type) && o->kind == SNAP_OP_RECV &&
		    o->tag == tag && o->peer_global == peer && o->comm == comm)
			return true;
	}
	return false;
}

static void probe_is_seen(const char *setup)
{
	struct snap *s = collect(setup, "probedeadlock", 2);
	int w = world(s);

	for (int r = 0; r < 2; r++) {
		const struct snap_rank *sr = &s->ranks[r];

		cr_expect(has_probe(sr, "probe", 3, 1 - r, w),
			  "rank %d: no probe for tag 3 from rank %d "
			  "among its %d ops", r, 1 - r, sr->nops);
		cr_expect(sr->unexpected_available);
	}
	snap_free(s);
}

static void internal_receives_are_seen(const char *setup)
{
	struct snap *s = collect(setup, "rootmismatch", 2);

	for (int r = 0; r < 2; r++) {
		const struct snap_rank *sr = &s->ranks[r];
		bool found = false;

		for (int k = 0; k < sr->nops; k++) {
			const struct snap_op *o = &sr->ops[k];

			/* Collective tags are negative; -1 is MPI_ANY_TAG. */
			found |= o->source == SNAP_SRC_OB1 &&
				 o->kind == SNAP_OP_RECV && o->tag < -1 &&
				 o->peer_global == 1 - r;
		}
		cr_expect(found, "rank %d (root of its own MPI_Reduce): no "
			  "internal receive from rank %d among its %d ops", r,
			  1 - r, sr->nops);
	}
	snap_free(s);
}

static void unexpected_message_and_datatype_are_seen(const char *setup)
{
	struct snap *s = collect(setup, "wrongtag", 2);
	const struct snap_rank *sr = &s->ranks[1];
	bool unex = false, named = false;

	for (int k = 0; k < sr->nops; k++) {
		const struct snap_op *o = &sr->ops[k];

		unex |= o->kind == SNAP_OP_UNEXPECTED &&
			o->source == SNAP_SRC_OB1 && o->peer_global == 0 &&
			o->tag == 1 && o->sequence > 0;
		if (o->kind == SNAP_OP_RECV && o->source == SNAP_SRC_DLL) {
			named = o->datatype && !strcmp(o->datatype, "MPI_INT") &&
				o->count == 1;
			/* The DLL's own text stays as the DLL wrote it. */
			cr_expect(o->nextra >= 3 && !strcmp(o->extra[2], "MPI_"),
				  "the DLL's extra_text was changed");
		}
	}
	cr_expect(unex, "rank 1: no unexpected message from rank 0, tag 1");
	cr_expect(named, "rank 1's receive has no datatype 1 x MPI_INT");
	snap_free(s);
}

/* A polling loop on MPI_Iprobe: the probe's request lives on ob1's stack
 * for the length of one call, never in a queue; read from the stack of
 * the rank stopped in it, with its source and tag.  Four looks: the
 * newest keeps the probe of an earlier one when it caught the rank
 * between two calls (a look in the call finds it nearly always). */
static void iprobe_loop_is_seen(const char *setup)
{
	struct snap *s;
	int w;

	looks = "4";
	s = collect(setup, "iprobespin", 2);
	w = world(s);
	for (int r = 0; r < 2; r++) {
		const struct snap_rank *sr = &s->ranks[r];

		cr_expect(has_probe(sr, "iprobe", 5, 1 - r, w),
			  "rank %d (in %s): no iprobe for tag 5 from "
			  "rank %d among its %d ops", r,
			  sr->mpi_call ? sr->mpi_call : "-", 1 - r, sr->nops);
		cr_expect_eq(sr->progress, SNAP_PROGRESS_STABLE,
			     "rank %d: the loop's probes made it look moving", r);
	}
	snap_free(s);
}

/* A collective that keeps moving data: the DLL shows nothing of it, the
 * ranks sit in MPI_Allreduce in every look, and only its internal
 * requests (new sequences, bytes moving) tell the looks apart. */
static void long_collective_is_seen_moving(const char *setup)
{
	struct snap *s = collect(setup, "longcoll", 2);

	cr_assert_geq(s->looks, 2);
	for (int r = 0; r < 2; r++)
		cr_expect_eq(s->ranks[r].progress, SNAP_PROGRESS_CHANGED,
			     "rank %d (in %s) judged %s", r,
			     s->ranks[r].mpi_call ? s->ranks[r].mpi_call : "-",
			     snap_progress_name(s->ranks[r].progress));
	snap_free(s);
}

static void switched_off_reads_the_dll_only(const char *setup)
{
	struct snap *s;

	setenv("MD_NO_OB1", "1", 1);
	s = collect(setup, "probedeadlock", 2);
	for (int r = 0; r < 2; r++)
		cr_expect_eq(count_ob1(&s->ranks[r]), 0,
			     "rank %d has ob1 ops with MD_NO_OB1=1", r);
	snap_free(s);
}

/* Debian's build without the Open MPI sources: no ob1 layouts.  Said
 * once, and the DLL's view is all there is. */
static void without_layouts_says_so_once(const char *setup)
{
	struct snap *s;
	int said = 0;

	setenv("MD_OMPI_SRCDIR", "/nonexistent/openmpi-4.1.4", 1);
	s = collect(setup, "wrongtag", 2);
	for (int i = 0; i < s->nnotes; i++)
		said += strstr(s->notes[i], "ob1's matching queues not read") &&
			strstr(s->notes[i], "/nonexistent/openmpi-4.1.4");
	cr_expect_eq(said, 1, "the missing layouts were said %d times", said);
	for (int r = 0; r < 2; r++)
		cr_expect_eq(count_ob1(&s->ranks[r]), 0);
	cr_expect_geq(s->ranks[1].nops, 1, "the DLL's receive is gone");
	snap_free(s);
}

#define E2E_OB1(X)                                                        \
	X(probe_is_seen) X(internal_receives_are_seen)                    \
	X(unexpected_message_and_datatype_are_seen)                       \
	X(long_collective_is_seen_moving) X(iprobe_loop_is_seen)          \
	X(switched_off_reads_the_dll_only)

#define E2E_OB1_TESTS(name)                                               \
	Test(e2e_ob1_debian, name, .timeout = 200, .fini = fini)          \
	{                                                                 \
		name("debian");                                           \
	}                                                                 \
	Test(e2e_ob1_ompig, name, .timeout = 200, .fini = fini)           \
	{                                                                 \
		name("ompi-g");                                           \
	}
E2E_OB1(E2E_OB1_TESTS)

/* Only Debian's build needs the sources: the -g build has DWARF. */
Test(e2e_ob1_debian, without_layouts_says_so_once, .timeout = 200,
     .fini = fini)
{
	without_layouts_says_so_once("debian");
}
