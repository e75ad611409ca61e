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
#define NP 2

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

Test(e2e_mpich_track, run_loads_the_mpich_build_into_hydra_ranks,
     .timeout = 150, .fini = fini)
{
	const char *build = getenv("MD_BUILD") ? getenv("MD_BUILD") : "build";
	char *lib = xasprintf("%s/lib/mpi-deadlock/mpich/libmdtrack.so", build);
	char *src, *prog, *out, *err, *snap, *outp, *errp, *snapp;
	FILE *f;
	int code;

	if (!rp_bin())
		cr_skip_test("MD_BIN is not set to the built mpi-deadlock");
	if (access(MPICH_G "/.mpi-deadlock-built", F_OK))
		cr_skip_test("no -g MPICH in " MPICH_G
			     " (scripts/build-mpich.sh)");
	cr_assert_eq(access(lib, R_OK), 0,
		     "%s is not built (make, with the -g MPICH there)", lib);
	dir = mj_tmpdir("mpich-track");
	cr_assert(dir);
	src = xasprintf("%s/irecv.c", dir);
	prog = xasprintf("%s/irecv", dir);
	outp = xasprintf("%s/out", dir);
	errp = xasprintf("%s/err", dir);
	snapp = xasprintf("%s/snap", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f);
	fputs(irecv_src, f);
	fclose(f);
	{
		char *cc[] = { S(MPICH_G "/bin/mpicc"), S("-g"), S("-o"), prog,
			       src, NULL };

		cr_assert_eq(rp_wait(rp_spawn(cc, NULL, NULL, NULL), 60000), 0,
			     "mpicc failed");
	}
	unsetenv("MD_TRACK_LIB_MPICH");
	char *argv[] = { S(rp_bin()), S("run"), S("--timeout=6"),
			 S("--snapshot"), snapp, S("--"),
			 S(MPICH_G "/bin/mpiexec"), S("-np"), S("2"), prog, dir,
			 NULL };
	code = rp_wait(rp_spawn(argv, NULL, outp, errp), 120000);
	out = mj_slurp(outp);
	err = mj_slurp(errp);
	snap = mj_slurp(snapp);
	cr_expect_eq(code, 1, "exit %d, want 1 (deadlock); stderr: %s", code,
		     err);
	cr_expect(out && strstr(out, "MPI implementation: MPICH"),
		  "report does not say MPICH:\n%s", out);
	cr_expect(err && !strstr(err, "libmdtrack.so for MPICH not found"),
		  "%s", err);
	{
		const char *at = strstr(irecv_src, "MPI_Irecv(");
		int line = 1;
		char *want;

		for (const char *p = irecv_src; p < at; p++)
			line += *p == '\n';
		want = xasprintf("rank 0 waits in MPI_Wait at %s:%d for the "
				 "MPI_Irecv posted at %s:%d, tag 1 from rank 1",
				 src, line + 1, src, line);
		cr_expect(out && strstr(out, want), "no line \"%s\":\n%s",
			  want, out);
		free(want);
	}
	/* Both ranks had the library: a table read in each. */
	cr_assert_not_null(snap);
	{
		int tracked = 0;

		for (const char *p = snap; (p = strstr(p, "\"track\":"));
		     p++)
			tracked++;
		cr_expect_eq(tracked, NP, "ranks with a table: %d\n%s",
			     tracked, snap);
	}
	cr_expect(!strstr(snap, "libmdtrack.so table of version"),
		  "the table was refused:\n%s", snap);
	free(out);
	free(err);
	free(snap);
	free(snapp);
	free(errp);
	free(outp);
	free(prog);
	free(src);
	free(lib);
}
