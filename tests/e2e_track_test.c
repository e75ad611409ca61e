/*
 * e2e_track_test.c - libmdtrack.so never changes what a program does:
 * every healthy (no-deadlock) sample of samples/manifest runs to its end
 * under real mpirun with and without the library (mpirun -x LD_PRELOAD),
 * on each Open MPI setup, and prints the same.  The marker lines
 * (MD-...) come in any order and are left out of the comparison.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "support/manifest.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define OMPI_G "/var/cache/mpi-deadlock/openmpi-4.1.4-g"
#define JOB_TIMEOUT_MS 240000

static char *dir;

static void fini(void)
{
	mj_tmpdir_end(&dir);
}

/* stdout without the marker lines. */
static char *without_markers(const char *text)
{
	char *out = xcalloc(1, strlen(text) + 1), *w = out;

	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");

		if (strncmp(p, "MD-", 3)) {
			memcpy(w, p, n);
			w += n;
			*w++ = '\n';
		}
		p += n + (p[n] == '\n');
	}
	*w = '\0';
	return out;
}

/* Run the sample to its end; returns its stdout without markers. */
static char *run_job(const char *mpirun, const char *prog, int np,
		     const char *lib, const char *name)
{
	char *env = lib ? xasprintf("LD_PRELOAD=%s", lib) : NULL;
	char *sub = xasprintf("%s/%s", dir, name), *text, *res;
	struct mj_job *j;
	int rc;

	cr_assert_eq(mkdir(sub, 0700), 0, "mkdir %s", sub);
	j = mj_start_with(mpirun, env ? "-x" : NULL, env, prog, np, sub);
	cr_assert_not_null(j);
	rc = mj_wait_exit(j, JOB_TIMEOUT_MS);
	text = mj_slurp(j->err);
	if (rc || !WIFEXITED(j->status) || WEXITSTATUS(j->status)) {
		int st = j->status;

		mj_end(j);
		cr_assert_fail("%s %s: %s (wait status 0x%x); stderr:\n%s",
			       name, prog, rc ? "did not end in time" : "failed",
			       st, text ? text : "");
	}
	free(text);
	text = mj_slurp(j->out);
	mj_end(j);
	cr_assert_not_null(text);
	res = without_markers(text);
	free(text);
	free(env);
	mj_rmdir(sub);
	free(sub);
	return res;
}

static void compare_setup(const char *setup, const char *mpirun)
{
	const char *build = getenv("MD_BUILD") ? getenv("MD_BUILD") : "build";
	char *mdir = mf_samples_dir(), *path = xasprintf("%s/manifest", mdir);
	char *lib = xasprintf("%s/lib/mpi-deadlock/libmdtrack.so", build);
	struct mf_manifest *m = NULL;
	int compared = 0;

	cr_assert_eq(mf_load(path, &m), 0);
	cr_assert_eq(access(lib, R_OK), 0, "%s is not built (make)", lib);
	cr_assert_not_null(dir = mj_tmpdir("track"));
	for (int i = 0; i < m->nsamples; i++) {
		const struct mf_sample *s = &m->samples[i];
		char *prog = xasprintf("%s/samples/%s/%s", build, setup,
				       s->binary);
		char *plain, *tracked;

		if (s->deadlock) {
			free(prog);
			continue;
		}
		if (access(prog, X_OK)) {
			free(prog);
			cr_skip_test("samples for %s are not built (make samples)",
				     setup);
		}
		plain = run_job(mpirun, prog, s->np, NULL, "plain");
		tracked = run_job(mpirun, prog, s->np, lib, "tracked");
		cr_expect_str_eq(tracked, plain, "%s: output differs with "
				 "libmdtrack.so", s->name);
		cr_expect(plain[0], "%s printed nothing", s->name);
		compared++;
		free(plain);
		free(tracked);
		free(prog);
	}
	cr_expect_gt(compared, 0, "no healthy sample in the manifest");
	cr_log_info("%s: %d healthy samples compared", setup, compared);
	mf_free(m);
	free(lib);
	free(path);
	free(mdir);
}

Test(e2e_track, healthy_output_is_the_same_with_the_library_debian,
     .timeout = 1200, .fini = fini)
{
	compare_setup("debian", "mpirun");
}

Test(e2e_track, healthy_output_is_the_same_with_the_library_ompig,
     .timeout = 1200, .fini = fini)
{
	if (access(OMPI_G "/.mpi-deadlock-built", R_OK))
		cr_skip_test("%s not built yet (scripts/build-openmpi.sh)",
			     OMPI_G);
	compare_setup("ompi-g", OMPI_G "/bin/mpirun");
}

/* A report line's text without the directories of its file names. */
static bool has_plain_line(const char *text, const char *want)
{
	const char *p = text;

	while (p && *p) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n), *w = line;
		const char *tok = line;
		bool ok;

		for (const char *c = line; *c; c++) {
			if (*c == ' ')
				tok = c + 1;
			if (*c == '/') {
				w -= c - tok;
				tok = c + 1;
				continue;
			}
			*w++ = *c;
		}
		*w = '\0';
		ok = !strcmp(line, want);
		free(line);
		if (ok)
			return true;
		p += n + (p[n] == '\n');
	}
	return false;
}

/* Both ranks in MPI_Reduce, each naming itself the root (the wait-for
 * graph sees no deadlock: everyone is in the collective): the recorded
 * arguments say how the calls disagree. */
static void rootmismatch(const char *setup, const char *mpirun)
{
	const char *build = getenv("MD_BUILD") ? getenv("MD_BUILD") : "build";
	const char *bin = getenv("MD_BIN");
	char *prog = xasprintf("%s/samples/%s/rootmismatch", build, setup);
	char *lib = xasprintf("%s/lib/mpi-deadlock/libmdtrack.so", build);
	char *env = xasprintf("LD_PRELOAD=%s", lib);
	char pid[16], *out, *err, *text;
	struct mj_job *j;
	int st;

	if (!bin || access(bin, X_OK))
		cr_skip_test("MD_BIN is not set (run through make e2e)");
	if (access(prog, X_OK))
		cr_skip_test("%s is not built (make samples)", prog);
	cr_assert_eq(access(lib, R_OK), 0, "%s is not built (make)", lib);
	cr_assert_not_null(dir = mj_tmpdir("track"));
	j = mj_start_with(mpirun, "-x", env, prog, 2, dir);
	cr_assert_not_null(j);
	if (mj_wait_lines(j, "MD-", 2, 90000)) {
		mj_end(j);
		cr_assert_fail("the markers never came");
	}
	usleep(500 * 1000);
	snprintf(pid, sizeof(pid), "%d", (int)j->pid);
	out = xasprintf("%s/report.out", dir);
	err = xasprintf("%s/report.err", dir);
	{
		char *argv[] = { (char *)bin, (char *)"--attach", pid, NULL };

		st = rp_wait_status(rp_spawn(argv, NULL, out, err), 120000);
	}
	mj_end(j);
	text = mj_slurp(out);
	cr_assert(st != -1 && text, "the tool did not run");
	cr_expect(has_plain_line(text, "  rank 0 called MPI_Reduce with root 0 "
				 "at rootmismatch.c:13, rank 1 with root 1 at "
				 "rootmismatch.c:13"),
		  "no disagreement line in:\n%s", text);
	free(text);
	free(out);
	free(err);
	free(env);
	free(lib);
	free(prog);
}

Test(e2e_track, reduce_roots_that_disagree_are_named_debian, .timeout = 300,
     .fini = fini)
{
	rootmismatch("debian", "mpirun");
}

Test(e2e_track, reduce_roots_that_disagree_are_named_ompig, .timeout = 300,
     .fini = fini)
{
	if (access(OMPI_G "/.mpi-deadlock-built", R_OK))
		cr_skip_test("%s not built yet (scripts/build-openmpi.sh)",
			     OMPI_G);
	rootmismatch("ompi-g", OMPI_G "/bin/mpirun");
}
