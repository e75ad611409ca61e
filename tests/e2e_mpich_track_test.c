/*
 * e2e_mpich_track_test.c - libmdtrack.so under a real MPICH job (the -g
 * MPICH of scripts/build-mpich.sh, Hydra's mpiexec): `run -- mpiexec`
 * passes the build against MPICH's mpi.h with -genv, the ranks load it,
 * the snapshot holds their tables, and the report names the MPI_Irecv
 * that rank 0 waits for (joined by its arguments: MPICH's DLL gives no
 * request).
 *
 * The job: rank 0 posts an MPI_Irecv for tag 1 and waits for it, rank 1
 * sends tag 2 and waits for tag 3; each rank writes its pid to
 * DIR/rank.N.pid, and the test ends the ranks that are left, by pid.
 *
 * A second job names communicators by their MPICH handles: rank 0 in
 * MPI_Barrier on the fourth duplicate of MPI_COMM_WORLD (an indirect
 * handle: MPICH's direct block of 8 is used up by then), rank 1 waiting
 * for an MPI_Irecv on the first (a direct handle).  Every communicator
 * of the job has world's group and MPICH's queues show no collective's
 * internal request: only the handle in libmdtrack.so's records tells
 * which one the barrier is on.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define S(lit) ((char *)(lit))
#define MPICH_G "/var/cache/mpi-deadlock/mpich-4.0.2-g"
#define NP 3	/* ranks at most */

static const char irecv_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n{\n"
	"	int rank, v = 0, one = 1;\n	char p[4096];\n	FILE *f;\n"
	"	MPI_Request req;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
	"	snprintf(p, sizeof(p), \"%s/rank.%d.pid\", argv[1], rank);\n"
	"	if ((f = fopen(p, \"w\"))) {\n"
	"		fprintf(f, \"%d\\n\", (int)getpid());\n		fclose(f);\n	}\n"
	"	if (rank == 0) {\n"
	"		MPI_Irecv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &req);\n"
	"		MPI_Wait(&req, MPI_STATUS_IGNORE);\n"
	"	} else {\n"
	"		MPI_Send(&one, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);\n"
	"		MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD,\n"
	"			 MPI_STATUS_IGNORE);\n"
	"	}\n"
	"	MPI_Finalize();\n	return 0;\n}\n";

static const char dups_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n{\n"
	"	int rank, v = 0, i;\n	char p[4096];\n	FILE *f;\n"
	"	MPI_Comm c[4];\n	MPI_Request req;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
	"	for (i = 0; i < 4; i++)\n"
	"		MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);\n"
	"	MPI_Comm_set_name(c[0], \"first\");\n"
	"	MPI_Comm_set_name(c[3], \"last\");\n"
	"	snprintf(p, sizeof(p), \"%s/rank.%d.pid\", argv[1], rank);\n"
	"	if ((f = fopen(p, \"w\"))) {\n"
	"		fprintf(f, \"%d\\n\", (int)getpid());\n		fclose(f);\n	}\n"
	"	if (rank == 0) {\n"
	"		MPI_Barrier(c[3]);\n"
	"	} else {\n"
	"		MPI_Irecv(&v, 1, MPI_INT, 0, 5, c[0], &req);\n"
	"		MPI_Wait(&req, MPI_STATUS_IGNORE);\n"
	"	}\n"
	"	MPI_Finalize();\n	return 0;\n}\n";

/* Three ranks: 0 and 1 in MPI_Allreduce with other datatypes and
 * operations, 2 in MPI_Barrier. */
static const char types_src[] =
	"#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n{\n"
	"	int rank, i = 1, j;\n	float x = 1, y;\n	char p[4096];\n"
	"	FILE *f;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n"
	"	snprintf(p, sizeof(p), \"%s/rank.%d.pid\", argv[1], rank);\n"
	"	if ((f = fopen(p, \"w\"))) {\n"
	"		fprintf(f, \"%d\\n\", (int)getpid());\n		fclose(f);\n	}\n"
	"	if (rank == 0)\n"
	"		MPI_Allreduce(&i, &j, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);\n"
	"	else if (rank == 1)\n"
	"		MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
	"	else\n"
	"		MPI_Barrier(MPI_COMM_WORLD);\n"
	"	MPI_Finalize();\n	return 0;\n}\n";

static char *dir;

static void fini(void)
{
	pid_t pids[NP];
	int n;

	if (!dir)
		return;
	n = rp_rank_pids(dir, pids, NP);
	rp_wait_gone(pids, n, 2000);
	rp_kill_all(pids, n);
	mj_tmpdir_end(&dir);
}

/* The line of src that the first needle is on. */
static int line_of(const char *src, const char *needle)
{
	const char *at = strstr(src, needle);
	int line = 1;

	cr_assert_not_null(at, "%s", needle);
	for (const char *p = src; p < at; p++)
		line += *p == '\n';
	return line;
}

/* Skip unless the binary, the -g MPICH and the library are there. */
static void need_mpich(void)
{
	const char *build = getenv("MD_BUILD") ? getenv("MD_BUILD") : "build";
	char *lib = xasprintf("%s/lib/mpi-deadlock/mpich/libmdtrack.so", build);

	if (!rp_bin())
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock");
	if (access(MPICH_G "/.mpi-deadlock-built", F_OK))
		cr_skip_test("no -g MPICH in " MPICH_G
			     " (scripts/build-mpich.sh)");
	cr_assert_eq(access(lib, R_OK), 0,
		     "%s is not built (make, with the -g MPICH there)", lib);
	free(lib);
}

/*
 * Compile text into dir/name with the -g MPICH's mpicc and run it with
 * `mpi-deadlock run --timeout=6 --snapshot`; *src the source's path,
 * *out, *err, *snap what the run wrote (malloc'ed, NULL if none).
 * Returns the run's exit code.
 */
static int run_job(const char *name, const char *text, int np, char **src,
		   char **out, char **err, char **snap)
{
	char *prog, *outp, *errp, *snapp, nps[16];
	FILE *f;
	int code;

	dir = mj_tmpdir("mpich-track");
	cr_assert(dir);
	*src = xasprintf("%s/%s.c", dir, name);
	prog = xasprintf("%s/%s", dir, name);
	outp = xasprintf("%s/out", dir);
	errp = xasprintf("%s/err", dir);
	snapp = xasprintf("%s/snap", dir);
	f = fopen(*src, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	{
		char *cc[] = { S(MPICH_G "/bin/mpicc"), S("-g"), S("-o"), prog,
			       *src, NULL };

		cr_assert_eq(rp_wait(rp_spawn(cc, NULL, NULL, NULL), 60000), 0,
			     "mpicc failed");
	}
	unsetenv("MD_TRACK_LIB_MPICH");
	snprintf(nps, sizeof(nps), "%d", np);
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=6"),
			 S("--snapshot"), snapp, S("--"),
			 S(MPICH_G "/bin/mpiexec"), S("-np"), nps, prog, dir,
			 NULL };
	code = rp_wait(rp_spawn(argv, NULL, outp, errp), 120000);
	*out = mj_slurp(outp);
	*err = mj_slurp(errp);
	*snap = mj_slurp(snapp);
	free(snapp);
	free(errp);
	free(outp);
	free(prog);
	return code;
}

Test(e2e_mpich_track, run_loads_the_mpich_build_into_hydra_ranks,
     .timeout = 150, .fini = fini)
{
	char *src, *out, *err, *snap, *want;
	int code, line;

	need_mpich();
	code = run_job("irecv", irecv_src, 2, &src, &out, &err, &snap);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_expect(out && strstr(out, "MPI implementation: MPICH"),
		  "report does not say MPICH:\n%s", out);
	cr_expect(err && !strstr(err, "libmdtrack.so for MPICH not found"),
		  "%s", err);
	line = line_of(irecv_src, "MPI_Irecv(");
	want = xasprintf("rank 0 waits in MPI_Wait at %s:%d for the "
			 "MPI_Irecv posted at %s:%d, tag 1 from rank 1",
			 src, line + 1, src, line);
	cr_expect(out && strstr(out, want), "no line \"%s\":\n%s", want, out);
	free(want);
	/* Both ranks had the library: a table read in each. */
	cr_assert_not_null(snap);
	{
		int tracked = 0;

		for (const char *p = snap; (p = strstr(p, "\"track\":"));
		     p++)
			tracked++;
		cr_expect_eq(tracked, 2, "ranks with a table: %d\n%s",
			     tracked, snap);
	}
	cr_expect(!strstr(snap, "libmdtrack.so table of version"),
		  "the table was refused:\n%s", snap);
	free(out);
	free(err);
	free(snap);
	free(src);
}

Test(e2e_mpich_track, handles_name_the_duplicates_a_collective_and_a_post_are_on,
     .timeout = 150, .fini = fini)
{
	char *src, *out, *err, *snap, *want;
	int code, bar = line_of(dups_src, "MPI_Barrier("),
	    irecv = line_of(dups_src, "MPI_Irecv(");

	need_mpich();
	code = run_job("dups", dups_src, 2, &src, &out, &err, &snap);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_assert_not_null(out);
	/* The barrier on "last", not on the group's first communicator,
	 * MPI_COMM_WORLD. */
	want = xasprintf("rank 0 (MPI_Barrier at %s:%d) waits for rank 1 "
			 "(MPI_Wait at %s:%d): collective on last (id ",
			 src, bar, src, irecv + 1);
	cr_expect(strstr(out, want), "no line \"%s\":\n%s", want, out);
	free(want);
	/* The posting on "first", not on "communicator 0x84000002". */
	want = xasprintf("rank 1 waits in MPI_Wait at %s:%d for the MPI_Irecv "
			 "posted at %s:%d, tag 5 from rank 0 on first\n",
			 src, irecv + 1, src, irecv);
	cr_expect(strstr(out, want), "no line \"%s\":\n%s", want, out);
	free(want);
	/* The barrier's handle was an indirect one (0xc...), the
	 * receive's a direct one (0x8...): both kinds were looked up. */
	cr_assert_not_null(snap);
	cr_expect(strstr(snap, "\"comm_handle\":\"0xc4"), "%s", snap);
	cr_expect(strstr(snap, "\"comm_handle\":\"0x84"), "%s", snap);
	free(out);
	free(err);
	free(snap);
	free(src);
}

/* MPICH's handles of predefined datatypes and operations are named (its
 * constants), so the collectives that disagree say how. */
Test(e2e_mpich_track, predefined_datatypes_and_operations_are_named,
     .timeout = 150, .fini = fini)
{
	char *src, *out, *err, *snap, *want;
	int code, line = line_of(types_src, "MPI_Allreduce(");

	need_mpich();
	code = run_job("types", types_src, 3, &src, &out, &err, &snap);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_assert_not_null(out);
	want = xasprintf("rank 0 called MPI_Allreduce with MPI_INT, MPI_MAX "
			 "at %s:%d, rank 1 with MPI_FLOAT, MPI_SUM at %s:%d",
			 src, line, src, line + 2);
	cr_expect(strstr(out, want), "no line \"%s\":\n%s", want, out);
	free(want);
	free(out);
	free(err);
	free(snap);
	free(src);
}

/* MPI_Comm_spawn under MPICH (rp_spawn_src): the child's pg_rank (0 of
 * its own process group) is no rank of the job, so the parent's receive
 * from it is no wait on rank 0 but a wait outside the job: no verdict
 * (exit 2), and run ends parent and child. */
Test(e2e_mpich_track, wait_on_a_spawned_child_gives_no_verdict,
     .timeout = 150, .fini = fini)
{
	char *src, *out, *err, *snap;
	pid_t pids[NP];
	int code, n;

	need_mpich();
	code = run_job("spawn", rp_spawn_src, 1, &src, &out, &err, &snap);
	n = rp_rank_pids(dir, pids, NP);
	cr_expect_eq(n, 2, "parent and child did not both start");
	cr_expect_eq(rp_wait_gone(pids, n, 5000), 0, "a process is left");
	cr_expect_eq(code, 2, "exit %d, want 2 (incomplete)\n%s\n%s", code,
		     out, err);
	cr_expect(out && strstr(out, "waits on processes outside the job"),
		  "%s", out);
	cr_expect(out && !strstr(out, "waits for rank 0"), "%s", out);
	free(out);
	free(err);
	free(snap);
	free(src);
}
