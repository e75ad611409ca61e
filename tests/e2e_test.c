/*
 * e2e_test.c - end-to-end: every sample of samples/manifest under real
 * mpirun, once per Open MPI setup (Debian's, and the -g build of
 * scripts/build-openmpi.sh), and under the -g MPICH of
 * scripts/build-mpich.sh (Hydra's mpiexec, suite e2e_mpich), with
 * `mpi-deadlock --attach` checked against the manifest; and the collector's own faults (bad pid, not MPI, SIGINT,
 * a rank killed during collection).
 *
 * Each test starts its job in its own process group with a parent-death
 * signal, and the .fini hook ends every process of it by pid (mpijob.c).
 */
#include <criterion/criterion.h>
#include "support/jtree.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"
#include "snap.h"
#include "support/manifest.h"
#include "support/mpijob.h"
#include "support/run_proc.h"

#define OMPI_G "/var/cache/mpi-deadlock/openmpi-4.1.4-g"
#define MPICH_G "/var/cache/mpi-deadlock/mpich-4.0.2-g"
#define MARKER_TIMEOUT_MS 90000
#define TOOL_TIMEOUT_MS 120000
#define SETTLE_MS 500

/* The one job and directory of the running test, for the .fini hook:
 * Criterion gives a failed assertion no other way to clean up. */
static struct mj_job *cur_job;
static char *cur_dir;
static pid_t cur_other = -1;	/* a helper child (sleep), not MPI */
static bool cur_failed;		/* an EXPECT failed: dump the evidence */
static bool cur_done;		/* run_sample got to its end */
static char cur_name[128];	/* suite-test, for a kept folder */

/* cr_expect that also remembers the failure (Criterion 2.4 cannot tell). */
#define EXPECT(cond, ...)                                                 \
	do {                                                              \
		bool ok_ = (cond);                                        \
		cur_failed |= !ok_;                                       \
		cr_expect(ok_, __VA_ARGS__);                              \
	} while (0)

static void e2e_fini(void)
{
	char *rep = cur_dir ? xasprintf("%s/report.out", cur_dir) : NULL;

	/* A failure (an EXPECT, or an assertion that ended the test after
	 * the tool ran) keeps its evidence: CI prints only its tail. */
	if (rep && !access(rep, F_OK) && (cur_failed || !cur_done))
		mj_tmpdir_keep(&cur_dir, cur_name);
	free(rep);
	cur_failed = false;
	cur_done = false;
	mj_end(cur_job);
	cur_job = NULL;
	if (cur_other > 0) {
		kill(cur_other, SIGKILL);
		waitpid(cur_other, NULL, 0);
		cur_other = -1;
	}
	mj_tmpdir_end(&cur_dir);
}

static char *make_dir(void)
{
	cur_dir = mj_tmpdir("e2e");
	cr_assert_not_null(cur_dir, "mkdtemp failed");
	return cur_dir;
}

static const char *md_bin(void)
{
	const char *bin = getenv("MD_BIN");

	if (!bin || access(bin, X_OK))
		cr_skip_test("MD_BIN is not an executable (run through make e2e)");
	return bin;
}

/* mpirun of a setup, and the folder of its samples. */
static const char *setup_mpirun(const char *setup)
{
	if (!strcmp(setup, "mpich"))
		return MPICH_G "/bin/mpiexec";
	return strcmp(setup, "ompi-g") ? "mpirun" : OMPI_G "/bin/mpirun";
}

/* The implementation the snapshot must name for a setup. */
static const char *setup_impl(const char *setup)
{
	return strcmp(setup, "mpich") ? "Open MPI" : "MPICH";
}

static char *sample_binary(const char *setup, const struct mf_sample *s)
{
	const char *build = getenv("MD_BUILD");
	char *p = xasprintf("%s/samples/%s/%s", build ? build : "build", setup,
			    s->binary);

	if (access(p, X_OK)) {
		free(p);
		cr_skip_test("samples for setup %s are not built (make samples%s)",
			     setup, !strcmp(setup, "ompi-g") ?
			     "; needs scripts/build-openmpi.sh done" :
			     !strcmp(setup, "mpich") ?
			     "; needs scripts/build-mpich.sh done" : "");
	}
	return p;
}

static struct mf_manifest *load_manifest(void)
{
	char *dir = mf_samples_dir(), *path = xasprintf("%s/manifest", dir);
	struct mf_manifest *m = NULL;
	int ret = mf_load(path, &m);

	cr_assert_eq(ret, 0, "cannot read %s", path);
	free(dir);
	free(path);
	return m;
}

static void dump_file(const char *what, const char *path)
{
	char *t = mj_slurp(path);

	cr_log_warn("--- %s (%s):\n%s", what, path, t ? t : "(missing)");
	free(t);
}

/* Run mpi-deadlock with args; stdout in dir/name.out.  Returns exit code. */
static int run_tool(char *const argv[], const char *name)
{
	char *out = xasprintf("%s/%s.out", cur_dir, name);
	char *err = xasprintf("%s/%s.err", cur_dir, name);
	int st = rp_wait_status(rp_spawn(argv, NULL, out, err),
				TOOL_TIMEOUT_MS);

	if (st == -1 || !WIFEXITED(st)) {
		dump_file("tool stderr", err);
		cr_assert_fail("%s %s: %s", argv[0], argv[1],
			       st == -1 ? "did not end in time" :
			       "killed by a signal");
	}
	free(out);
	free(err);
	return WEXITSTATUS(st);
}

static yajl_val jarray(yajl_val o, const char *key)
{
	yajl_val v = jt_get(o, key);

	cr_assert(jt_is_array(v), "JSON report lacks the array \"%s\"", key);
	return v;
}

/* The report's array key as flags over np ranks. */
static void json_ranks(yajl_val rep, const char *key, int np, bool *set)
{
	yajl_val a = jarray(rep, key);

	memset(set, 0, (size_t)np * sizeof(bool));
	for (size_t i = 0; i < jt_len(a); i++) {
		int r = jt_int(jt_at(a, i));

		cr_assert(r >= 0 && r < np, "%s holds rank %d of %d", key, r, np);
		set[r] = true;
	}
}

static void expect_rank_set(yajl_val rep, const char *key,
			    const bool *want, int np)
{
	bool *got = xcalloc((size_t)np, sizeof(bool));
	char g[256], w[256];

	json_ranks(rep, key, np, got);
	mf_format_ranks(got, np, g, sizeof(g));
	mf_format_ranks(want, np, w, sizeof(w));
	EXPECT(!strcmp(g, w), "%s ranks: got [%s], manifest says [%s]", key,
			 g, w);
	free(got);
}

/* The report's entry for rank r in "ranks", or NULL. */
static yajl_val json_rank(yajl_val rep, int r)
{
	yajl_val a = jarray(rep, "ranks");

	for (size_t i = 0; i < jt_len(a); i++) {
		yajl_val e = jt_at(a, i), v = jt_get(e, "rank");

		if (v && jt_int(v) == r)
			return e;
	}
	return NULL;
}

static const char *jstr(yajl_val o, const char *key)
{
	const char *v = jt_str(jt_get(o, key));

	return v ? v : "";
}

static int jint(yajl_val o, const char *key)
{
	yajl_val v = jt_get(o, key);

	return v ? jt_int(v) : -1;
}

/* "dir/ring.c" matches "ring.c": the report may give a full path. */
static bool same_file(const char *got, const char *want)
{
	size_t g = strlen(got), w = strlen(want);

	return g >= w && !strcmp(got + g - w, want) &&
	       (g == w || got[g - w - 1] == '/');
}

/* The setup of the sample being run ("debian", "ompi-g", "mpich"). */
static const char *cur_setup;

/* Does stuck line st apply to rank r on the current setup?  A "stuckon"
 * line of this setup for r replaces the plain "stuck" lines for r. */
static bool stuck_applies(const struct mf_sample *s,
			  const struct mf_stuck *st, int r)
{
	bool own = false;

	if (st->rank != r)
		return false;
	if (st->setup)
		return cur_setup && !strcmp(st->setup, cur_setup);
	for (int i = 0; i < s->nstuck; i++)
		own |= s->stuck[i].rank == r && s->stuck[i].setup &&
		       cur_setup && !strcmp(s->stuck[i].setup, cur_setup);
	return !own;
}

/* Where rank r is, against the manifest's alternatives for it; the text
 * report must name the call and file:line of that site. */
static void expect_site(yajl_val rep, const struct mf_sample *s, int r,
			const char *text)
{
	yajl_val e = json_rank(rep, r);
	const char *call, *file;
	int line;
	bool any = false, ok = false;

	for (int i = 0; i < s->nstuck; i++)
		any |= stuck_applies(s, &s->stuck[i], r);
	if (!any)
		return;
	cr_assert_not_null(e, "no entry for rank %d in \"ranks\"", r);
	call = jstr(e, "call");
	file = jstr(e, "file");
	line = jint(e, "line");
	for (int i = 0; i < s->nstuck; i++) {
		const struct mf_stuck *st = &s->stuck[i];

		ok |= stuck_applies(s, st, r) && !strcmp(st->call, call) &&
		      same_file(file, st->file) && st->line == line;
	}
	EXPECT(ok, "rank %d: report says %s at %s:%d, not as in the manifest",
		  r, call, file, line);
	if (!ok)
		return;
	char *site = xasprintf("%s:%d", strrchr(file, '/') ?
			       strrchr(file, '/') + 1 : file, line);
	EXPECT(strstr(text, call) && strstr(text, site),
		  "text report does not name %s and %s (rank %d)", call, site, r);
	free(site);
}

/* A report line without the directories of its file names. */
static char *strip_dirs(const char *line)
{
	char *out = xstrdup(line), *w = out;
	const char *tok = line;

	for (const char *p = line; *p; p++) {
		if (*p == ' ' || *p == '(')
			tok = p + 1;
		if (*p == '/') {
			w -= p - tok;
			tok = p + 1;
			continue;
		}
		*w++ = *p;
	}
	*w = '\0';
	return out;
}

/* libmdtrack.so's lines: "posted" ranks name the call that posted the
 * request they wait for, "disagree" lines are in the text. */
static void expect_track(const struct mf_sample *s, const char *text)
{
	char *plain = strip_dirs(text);

	for (int i = 0; i < s->nposted; i++) {
		const struct mf_stuck *p = &s->posted[i];
		const char *unseen = NULL;

		for (int k = 0; k < s->nunseen; k++)
			if (s->unseen[k].rank == p->rank &&
			    !strcmp(s->unseen[k].setup, cur_setup))
				unseen = s->unseen[k].call;
		if (unseen) {
			/* Its operation cannot be named: the report says so. */
			EXPECT(strstr(plain, "no pending operation visible"),
			       "rank %d (%s): the report does not say that no "
			       "pending operation is visible", p->rank, unseen);
			continue;
		}
		char *who = xasprintf("\n  rank %d waits in ", p->rank);
		char *what = xasprintf(" for the %s posted at %s:%d", p->call,
				       p->file, p->line);
		const char *l = strstr(plain, who);
		bool ok = false;

		for (; l && !ok; l = strstr(l + 1, who)) {
			char *eol = strchr(l + 1, '\n');
			char *line = eol ? xstrndup(l, (size_t)(eol - l))
					 : xstrdup(l);

			ok = strstr(line, what) != NULL;
			free(line);
		}
		EXPECT(ok, "text report: no line \"rank %d waits in ...%s\"",
		       p->rank, what);
		free(who);
		free(what);
	}
	for (int i = 0; i < s->ndisagree; i++) {
		char *line = xasprintf("\n  %s\n", s->disagree[i]);

		EXPECT(strstr(plain, line), "text report lacks the line \"%s\"",
		       s->disagree[i]);
		free(line);
	}
	free(plain);
}

/* libmdtrack.so for setup: MPICH's jobs need its build against MPICH's
 * mpi.h (integer handles), in lib/mpi-deadlock/mpich/. */
static char *track_lib(const char *setup)
{
	const char *build = getenv("MD_BUILD");
	char *lib = xasprintf("%s/lib/mpi-deadlock/%slibmdtrack.so",
			      build ? build : "build",
			      strcmp(setup, "mpich") ? "" : "mpich/");

	cr_assert_eq(access(lib, R_OK), 0, "%s is not built (make)", lib);
	return lib;
}

static yajl_val read_report(const char *path)
{
	char *text = mj_slurp(path);
	yajl_val rep = text ? jt_parse(text) : NULL;

	if (!rep)
		dump_file("JSON report", path);
	cr_assert_not_null(rep, "the JSON report does not parse");
	free(text);
	return rep;
}

/* The text report explains rank's wait by the unmatched message: a line
 * "rank R waits for ...; a message from rank F with tag T ...". */
static void expect_unmatched(const struct mf_unmatched *u, const char *text)
{
	char *waits = xasprintf("      rank %d waits for ", u->rank);
	char *msg = xasprintf("; a message from rank %d with tag %d", u->from,
			      u->tag);
	bool found = false;

	for (const char *p = strstr(text, waits); p && !found;
	     p = strstr(p + 1, waits)) {
		const char *m = strstr(p, msg), *nl = strchr(p, '\n');

		found = m && (!nl || m < nl) && strstr(m, "is unmatched");
	}
	EXPECT(found, "no line explains rank %d's wait by the unmatched "
		      "message from rank %d with tag %d", u->rank, u->from,
	       u->tag);
	free(waits);
	free(msg);
}

static void check_deadlock(const struct mf_sample *s, yajl_val rep,
			   int code, const char *snap)
{
	char *argv[] = { (char *)md_bin(), (char *)"analyze", (char *)snap,
			 NULL };
	char *tpath = xasprintf("%s/text.out", cur_dir), *text;
	int tcode;

	EXPECT(code == MD_EXIT_DEADLOCK, "exit code %d, want 1", code);
	EXPECT(!strcmp(jstr(rep, "verdict"), "deadlock"), "verdict: %s (%s)",
			 jstr(rep, "verdict"), jstr(rep, "summary"));
	expect_rank_set(rep, "deadlocked", s->deadlocked, s->np);
	if (s->has_behind)
		expect_rank_set(rep, "behind", s->behind, s->np);
	tcode = run_tool(argv, "text");
	EXPECT(tcode == code, "analyze exits %d, --attach exited %d",
		     tcode, code);
	text = mj_slurp(tpath);
	cr_assert_not_null(text);
	for (int r = 0; r < s->np; r++)
		expect_site(rep, s, r, text);
	expect_track(s, text);
	for (int i = 0; i < s->nunmatched; i++)
		expect_unmatched(&s->unmatched[i], text);
	if (cur_failed)
		cr_log_warn("--- text report:\n%s", text);
	free(text);
	free(tpath);
}

/* Does text hold line as a whole line? */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/* The job must run to its end by itself, exit 0 and print what the
 * manifest says: this also shows that the tool let every rank go. */
static void check_healthy(const struct mf_sample *s, yajl_val rep,
			  int code)
{
	char *out;

	EXPECT(!strcmp(jstr(rep, "verdict"), "no deadlock"),
			 "verdict: %s (%s)", jstr(rep, "verdict"),
			 jstr(rep, "summary"));
	EXPECT(code == MD_EXIT_NO_DEADLOCK, "exit code %d, want 0", code);
	/* MPICH's ch3 moves large messages between ranks on shared cores
	 * about ten times slower than Open MPI's vader (exchange: 17 s
	 * against 3 min here): its healthy jobs get longer. */
	cr_assert_eq(mj_wait_exit(cur_job, strcmp(cur_setup, "mpich") ?
						   180000 : 480000),
		     0, "the job did not finish after the tool detached");
	if (!WIFEXITED(cur_job->status) || WEXITSTATUS(cur_job->status))
		dump_file("job stderr", cur_job->err);
	EXPECT(WIFEXITED(cur_job->status) && !WEXITSTATUS(cur_job->status),
		  "the job ended with wait status 0x%x", cur_job->status);
	out = mj_slurp(cur_job->out);
	for (int i = 0; i < s->noutput; i++) {
		EXPECT(has_line(out, s->output[i]),
			  "job output lacks the line \"%s\"", s->output[i]);
	}
	free(out);
}

/* The topology the manifest names is in the snapshot: read from the
 * ranks' c_topo through the library's types. */
static void check_topology(const struct mf_sample *s, const char *snap)
{
	FILE *f = fopen(snap, "r");
	struct snap *sn = NULL;
	bool found = false;

	cr_assert_not_null(f, "no snapshot %s", snap);
	cr_assert_eq(snap_read(f, snap, &sn), 0);
	fclose(f);
	for (int c = 0; c < sn->ncomms && !found; c++) {
		const struct snap_comm *cm = &sn->comms[c];
		char *text = NULL, *want;
		size_t len = 0;
		FILE *m;

		if (cm->topo == SNAP_TOPO_NONE)
			continue;
		m = open_memstream(&text, &len);
		fprintf(m, "%s ", snap_topo_name(cm->topo));
		for (int i = 0; i < cm->size; i++)
			for (int k = cm->nbr_first[i]; k < cm->nbr_first[i + 1]; k++)
				fprintf(m, "%s%d", k > cm->nbr_first[i] ? "," :
					i ? ";" : "", cm->nbr[k]);
		fclose(m);
		want = s->topology;
		found = !strcmp(text, want);
		if (!found)
			cr_log_warn("communicator %d: topology %s", c, text);
		free(text);
	}
	EXPECT(found, "no communicator with topology %s in the snapshot",
	       s->topology);
	snap_free(sn);
}
/* The snapshot names the implementation the collector found. */
static void check_impl(const char *setup, const char *snap)
{
	FILE *f = fopen(snap, "r");
	struct snap *sn = NULL;
	int collected = 0;

	cr_assert_not_null(f, "no snapshot %s", snap);
	cr_assert_eq(snap_read(f, snap, &sn), 0);
	fclose(f);
	/* A job that ended before the look (a fast no-deadlock sample) left
	 * no library to tell: nothing to check then. */
	for (int r = 0; r < sn->nranks; r++)
		collected += sn->ranks[r].state == SNAP_RANK_COLLECTED;
	if (!collected) {
		cr_log_info("no rank collected: implementation not checked");
		snap_free(sn);
		return;
	}
	EXPECT(sn->impl && !strcmp(sn->impl, setup_impl(setup)),
	       "snapshot names implementation %s, want %s",
	       sn->impl ? sn->impl : "(none)", setup_impl(setup));
	snap_free(sn);
}

/* Spread over the test cluster (scripts/cluster.sh): the hostfile and
 * the launcher of the agents; NULL for one host. */
static const char *cur_hostfile, *cur_launcher;

static void run_sample(const char *setup, const char *name)
{
	struct mf_manifest *m = load_manifest();
	const struct mf_sample *s = mf_find(m, name);
	const char *bin = md_bin();
	char *prog, *snap, *rep_path, pid[16];
	yajl_val rep;
	int ret, code;
	bool hydra = !strcmp(setup, "mpich");
	const char *notfor;

	cur_setup = setup;
	snprintf(cur_name, sizeof(cur_name), "%s-%s-%s", setup,
		 cur_launcher ? cur_launcher : "local", name);
	cr_assert_not_null(s, "sample %s is not in the manifest", name);
	notfor = mf_notfor(s, setup);
	if (notfor)
		cr_skip_test("%s on %s: %s (samples/manifest)", name, setup,
			     notfor);
	prog = sample_binary(setup, s);
	make_dir();
	if (s->track) {
		/* Each launcher's own way to pass it to every rank. */
		char *lib = track_lib(setup), *env = xasprintf("LD_PRELOAD=%s", lib);
		char *ompi[] = { (char *)"-x", env, NULL };
		char *hy[] = { (char *)"-genv", (char *)"LD_PRELOAD", lib, NULL };
		struct mj_opts o = { .hostfile = cur_hostfile,
				     .args = hydra ? hy : ompi, .hydra = hydra };

		cur_job = mj_start_opts(setup_mpirun(setup), prog, s->np,
					cur_dir, &o);
		free(env);
		free(lib);
	} else if (hydra) {
		struct mj_opts o = { .hydra = true };

		cur_job = mj_start_opts(setup_mpirun(setup), prog, s->np,
					cur_dir, &o);
	} else {
		cur_job = mj_start_hosts(setup_mpirun(setup), prog, s->np,
					 cur_dir, cur_hostfile);
	}
	cr_assert_not_null(cur_job);
	ret = mj_wait_lines(cur_job, "MD-", s->markers, MARKER_TIMEOUT_MS);
	if (ret)
		dump_file("job stderr", cur_job->err);
	cr_assert_eq(ret, 0, "%d markers never came (%s)", s->markers,
		     ret == -MD_E_GONE ? "mpirun exited" : "timeout");
	mj_scan_ranks(cur_job);
	usleep(SETTLE_MS * 1000);

	snprintf(pid, sizeof(pid), "%d", (int)cur_job->pid);
	snap = xasprintf("%s/snap.jsonl", cur_dir);
	char *argv[] = { (char *)bin, (char *)"--attach", pid,
			 (char *)"--snapshot", snap, (char *)"--format",
			 (char *)"json", (char *)"--launcher",
			 (char *)(cur_launcher ? cur_launcher : "auto"),
			 /* -v: what moved between the looks, for a failure's
			  * report.err */
			 (char *)"-v", NULL };
	code = run_tool(argv, "report");
	rep_path = xasprintf("%s/report.out", cur_dir);
	rep = read_report(rep_path);
	if (s->deadlock)
		check_deadlock(s, rep, code, snap);
	else
		check_healthy(s, rep, code);
	check_impl(setup, snap);
	/* Topologies are read through Open MPI's types (topo.h). */
	if (s->topology && !hydra)
		check_topology(s, snap);
	if (cur_failed) {
		char *err = xasprintf("%s/report.err", cur_dir);

		dump_file("JSON report", rep_path);
		dump_file("tool stderr", err);
		free(err);
	}
	jt_free(rep);
	free(rep_path);
	free(snap);
	free(prog);
	mf_free(m);
	cur_done = true;
}

/* name, criterion timeout in s: one test per sample and setup. */
#define E2E_SAMPLES(X)                                                    \
	X(ring_4, 150) X(ring_8, 200) X(ring_16, 300) X(sendsend, 150)    \
	X(ssend, 150) X(wrongtag, 150) X(nosender, 150)                   \
	X(anysource, 150) X(waitall, 150) X(waitany, 200)                 \
	X(collmissing, 150) X(collmismatch, 150) X(splitcomm, 200)        \
	X(partial, 200) X(earlyexit, 150) X(finalizedrun, 150)          \
	X(threads, 150)                                                   \
	X(compute, 300) X(exchange, 300) X(commmismatch, 150) X(longcoll, 300) \
	X(irecvtag, 150) X(persistent, 150) X(mtexchange, 300)            \
	X(rootmismatch, 150) X(collcount, 150) X(collinterleave, 150)     \
	X(neighbormissing, 150) X(probedeadlock, 150) X(probeslow, 300)   \
	X(spindeadlock, 150) X(pollok, 300) X(nbcwait, 150)               \
	X(rmafence, 150) X(commmissing, 150) X(twodeadlocks, 150)    \
	X(mtreuse, 150) X(iprobespin, 150) X(copyout, 150)               \
	X(helperpost, 150)                                                \
	X(intercomm, 150) X(intercommslow, 300)          \
	X(sleeppoll, 150) X(irecvdone, 150) X(waitsome, 150)            \
	X(retryloop, 150)

#define E2E_TESTS(name, secs)                                             \
	Test(e2e_debian, name, .timeout = secs, .fini = e2e_fini)         \
	{                                                                 \
		run_sample("debian", #name);                              \
	}                                                                 \
	Test(e2e_ompig, name, .timeout = secs, .fini = e2e_fini)          \
	{                                                                 \
		run_sample("ompi-g", #name);                              \
	}                                                                 \
	Test(e2e_mpich, name, .timeout = 2 * secs + 120, .fini = e2e_fini) \
	{                                                                 \
		run_sample("mpich", #name);                               \
	}
E2E_SAMPLES(E2E_TESTS)

/*
 * The same across 3 hosts of the test cluster (scripts/test.sh brings it
 * up and exports `scripts/cluster.sh env`), the agents started by ssh or
 * by the job's own mpirun; samples of fewer than 3 ranks are skipped.
 */
static void run_on_cluster(const char *setup, const char *name,
			   const char *launcher)
{
	const char *hf = getenv("MD_CLUSTER_HOSTFILE");
	const char *hosts = getenv("MD_CLUSTER_HOSTS");
	struct mf_manifest *m;
	int np, nhosts = 0;

	if (!hf || access(hf, R_OK))
		cr_skip_test("no test cluster: run `scripts/cluster.sh up 3` "
			     "and `eval \"$(scripts/cluster.sh env)\"` (make "
			     "test through scripts/test.sh does)");
	for (const char *p = hosts; p && *p; p += strspn(p, " "))
		if (*p) {
			nhosts++;
			p += strcspn(p, " ");
		}
	m = load_manifest();
	cr_assert_not_null(mf_find(m, name));
	np = mf_find(m, name)->np;
	mf_free(m);
	if (nhosts < 3)
		cr_skip_test("the test cluster has %d hosts, 3 needed", nhosts);
	if (np < 3)
		cr_skip_test("%s has %d ranks: not spread over 3 hosts", name,
			     np);
	cur_hostfile = hf;
	cur_launcher = launcher;
	run_sample(setup, name);
}

#define E2E_CLUSTER_TESTS(name, secs)                                     \
	Test(e2e_hosts_ssh_debian, name, .timeout = secs,                 \
	     .fini = e2e_fini)                                            \
	{                                                                 \
		run_on_cluster("debian", #name, "ssh");                   \
	}                                                                 \
	Test(e2e_hosts_mpirun_debian, name, .timeout = secs,              \
	     .fini = e2e_fini)                                            \
	{                                                                 \
		run_on_cluster("debian", #name, "mpirun");                \
	}                                                                 \
	Test(e2e_hosts_ssh_ompig, name, .timeout = secs,                  \
	     .fini = e2e_fini)                                            \
	{                                                                 \
		run_on_cluster("ompi-g", #name, "ssh");                   \
	}                                                                 \
	Test(e2e_hosts_mpirun_ompig, name, .timeout = secs,               \
	     .fini = e2e_fini)                                            \
	{                                                                 \
		run_on_cluster("ompi-g", #name, "mpirun");                \
	}
E2E_SAMPLES(E2E_CLUSTER_TESTS)

#define E2E_NAME(name, secs) #name,
static const char *const tested[] = { E2E_SAMPLES(E2E_NAME) };

Test(e2e_manifest, every_sample_has_an_e2e_test)
{
	struct mf_manifest *m = load_manifest();
	size_t n = sizeof(tested) / sizeof(tested[0]);

	cr_expect_eq((size_t)m->nsamples, n, "manifest %d samples, tests %zu",
		     m->nsamples, n);
	for (size_t i = 0; i < n; i++)
		cr_expect_not_null(mf_find(m, tested[i]),
				   "test %s has no manifest entry", tested[i]);
	mf_free(m);
}

/* Line number of file:line, or NULL (free). */
static char *source_line(const char *dir, const char *file, int line)
{
	char *path = xasprintf("%s/%s", dir, file), *text = mj_slurp(path);
	char *p = text, *res = NULL;

	for (int l = 1; p && l < line; l++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	if (p && *p)
		res = xstrndup(p, strcspn(p, "\n"));
	free(text);
	free(path);
	return res;
}

Test(e2e_manifest, stuck_lines_point_at_the_mpi_call)
{
	struct mf_manifest *m = load_manifest();
	char *dir = mf_samples_dir();

	cr_assert_gt(m->nsamples, 0);
	for (int i = 0; i < m->nsamples; i++) {
		const struct mf_sample *s = &m->samples[i];

		cr_expect(s->markers > 0, "%s: no markers line", s->name);
		cr_expect(s->deadlock ? s->nstuck > 0 : s->noutput > 0,
			  "%s: no stuck / output lines", s->name);
		for (int k = 0; k < s->nstuck; k++) {
			const struct mf_stuck *st = &s->stuck[k];
			char *l = source_line(dir, st->file, st->line);
			char *call = xasprintf("%s(", st->call);

			cr_expect(l && strstr(l, call) && strstr(l, "STUCK"),
				  "%s: %s:%d is not a STUCK line calling %s",
				  s->name, st->file, st->line, st->call);
			free(call);
			free(l);
		}
		for (int k = 0; k < s->nposted; k++) {
			const struct mf_stuck *st = &s->posted[k];
			char *l = source_line(dir, st->file, st->line);
			char *call = xasprintf("%s(", st->call);

			cr_expect(l && strstr(l, call) && strstr(l, "POSTED"),
				  "%s: %s:%d is not a POSTED line calling %s",
				  s->name, st->file, st->line, st->call);
			free(call);
			free(l);
		}
	}
	free(dir);
	mf_free(m);
}

Test(e2e_manifest, rank_sets_parse_and_format_back)
{
	bool set[8];
	char buf[64];

	cr_assert_eq(mf_parse_ranks("0-2,5,7", 8, set), 0);
	mf_format_ranks(set, 8, buf, sizeof(buf));
	cr_expect_str_eq(buf, "0-2,5,7");
	cr_expect_neq(mf_parse_ranks("3-8", 8, set), 0);
	cr_expect_neq(mf_parse_ranks("2,x", 8, set), 0);
}

/* ---- the collector's own faults ---- */

static int count_char(const char *s, char c)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == c;
	return n;
}

static void expect_error_naming(const char *err_path, pid_t pid,
				int max_lines)
{
	char *err = mj_slurp(err_path), ids[16];

	snprintf(ids, sizeof(ids), "%d", (int)pid);
	cr_expect(err && *err, "nothing on stderr");
	cr_expect(count_char(err, '\n') >= 1 &&
		  count_char(err, '\n') <= max_lines,
		  "stderr has %d lines, want 1..%d:\n%s", count_char(err, '\n'),
		  max_lines, err ? err : "");
	cr_expect(err && strstr(err, ids), "stderr does not name pid %s:\n%s",
		  ids, err ? err : "");
	free(err);
}

static int attach_only(const char *bin, pid_t pid, const char *name)
{
	char ids[16];

	snprintf(ids, sizeof(ids), "%d", (int)pid);
	char *argv[] = { (char *)bin, (char *)"--attach", ids, NULL };
	return run_tool(argv, name);
}

Test(e2e_faults, attach_to_missing_pid_exits_3_naming_the_pid,
     .timeout = 60, .fini = e2e_fini)
{
	const char *bin = md_bin();
	pid_t gone = fork();
	char *err;

	if (gone == 0)
		_exit(0);
	cr_assert_gt(gone, 0);
	waitpid(gone, NULL, 0);
	make_dir();
	cr_expect_eq(attach_only(bin, gone, "missing"), MD_EXIT_ERROR);
	err = xasprintf("%s/missing.err", cur_dir);
	expect_error_naming(err, gone, 1);
	free(err);
}

Test(e2e_faults, attach_to_non_mpi_process_exits_3_and_leaves_it_running,
     .timeout = 60, .fini = e2e_fini)
{
	const char *bin = md_bin();
	char exe[256] = "", link[64], *err;
	int code;

	cur_other = fork();
	if (cur_other == 0) {
		setpgid(0, 0);
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	cr_assert_gt(cur_other, 0);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)cur_other);
	for (int t = 0; t < 100 && !strstr(exe, "sleep"); t++) {
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		usleep(20000);
	}
	cr_assert(strstr(exe, "sleep"), "sleep did not start");
	make_dir();
	code = attach_only(bin, cur_other, "notmpi");
	cr_expect_eq(code, MD_EXIT_ERROR, "exit code %d, want 3", code);
	err = xasprintf("%s/notmpi.err", cur_dir);
	expect_error_naming(err, cur_other, 2);
	free(err);
	char st = mj_proc_state(cur_other);
	cr_expect(st == 'S' || st == 'R', "sleep is in state %c", st);
	cr_expect_eq(mj_tracer(cur_other), 0, "sleep is still traced");
}

/* Start a sample for a fault test; skips when it is not built. */
static const struct mf_sample *start_sample(struct mf_manifest *m,
					    const char *name)
{
	const struct mf_sample *s = mf_find(m, name);
	char *prog;

	cr_assert_not_null(s);
	prog = sample_binary("debian", s);
	make_dir();
	cur_job = mj_start("mpirun", prog, s->np, cur_dir);
	cr_assert_not_null(cur_job);
	cr_assert_eq(mj_wait_lines(cur_job, "MD-", s->markers,
				   MARKER_TIMEOUT_MS), 0, "no markers");
	usleep(SETTLE_MS * 1000);
	cr_assert_geq(mj_scan_ranks(cur_job), s->np, "ranks not found");
	free(prog);
	return s;
}

/* What a fault test does once the tool is tracing a rank. */
struct fault {
	struct mj_job *job;
	int sig;		/* to the tool (SIGINT) or, with rank >= 0, */
	int rank;		/* to that rank (index in job->ranks) */
	bool fired;
};

/* Once the tool runs: wait until it traces some rank, so the
 * fault lands during collection, not before the tool set up. */
static void fire_when_tracing(pid_t tool, struct fault *f)
{
	for (int t = 0; t < 3000 && !f->fired; t++) {
		for (int i = 0; i < f->job->nranks && !f->fired; i++) {
			if (mj_tracer(f->job->ranks[i]) != tool)
				continue;
			kill(f->rank >= 0 ? f->job->ranks[f->rank] : tool,
			     f->sig);
			f->fired = true;
		}
		usleep(10000);
	}
}

/* No rank left stopped or traced, looked at several times over 1 s. */
static void expect_ranks_running(const struct mj_job *j)
{
	for (int look = 0; look < 5; look++) {
		for (int i = 0; i < j->nranks; i++) {
			char st = mj_proc_state(j->ranks[i]);

			cr_expect(st != 't' && st != 'T',
				  "rank pid %d left in state %c",
				  (int)j->ranks[i], st);
			cr_expect(!st || mj_tracer(j->ranks[i]) == 0,
				  "rank pid %d still traced", (int)j->ranks[i]);
		}
		usleep(200000);
	}
}

static int faulty_attach(const char *bin, struct fault *f, const char *name)
{
	char ids[16];
	char *out = xasprintf("%s/%s.out", cur_dir, name);
	char *err = xasprintf("%s/%s.err", cur_dir, name);
	pid_t tool;
	int st;

	snprintf(ids, sizeof(ids), "%d", (int)cur_job->pid);
	char *argv[] = { (char *)bin, (char *)"--attach", ids, NULL };
	tool = rp_spawn(argv, NULL, out, err);
	cr_assert_gt(tool, 0, "fork for %s", bin);
	fire_when_tracing(tool, f);
	st = rp_wait_status(tool, TOOL_TIMEOUT_MS);
	if (st == -1 || !WIFEXITED(st))
		dump_file("tool stderr", err);
	cr_assert(st != -1, "the tool did not end in time");
	cr_assert(WIFEXITED(st), "the tool died of signal %d",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	free(out);
	free(err);
	return WEXITSTATUS(st);
}

Test(e2e_faults, sigint_during_collection_leaves_every_rank_running,
     .timeout = 300, .fini = e2e_fini)
{
	const char *bin = md_bin();
	struct mf_manifest *m = load_manifest();
	const struct mf_sample *s = start_sample(m, "ring_16");
	struct fault f = { .job = cur_job, .sig = SIGINT, .rank = -1 };
	int code = faulty_attach(bin, &f, "sigint");

	cr_assert(f.fired, "the tool never traced a rank: SIGINT not sent");
	cr_expect_neq(code, MD_EXIT_NO_DEADLOCK,
		      "interrupted, yet exit code 0");
	expect_ranks_running(cur_job);
	/* The job is intact: a second look gives the full verdict. */
	cr_expect_eq(attach_only(bin, cur_job->pid, "again"),
		     MD_EXIT_DEADLOCK, "a second attach after SIGINT");
	(void)s;
	mf_free(m);
}

Test(e2e_faults, rank_killed_during_collection_ends_cleanly,
     .timeout = 300, .fini = e2e_fini)
{
	const char *bin = md_bin();
	struct mf_manifest *m = load_manifest();
	const struct mf_sample *s = start_sample(m, "ring_8");
	struct fault f = { .job = cur_job, .sig = SIGKILL, .rank = 0 };
	int code = faulty_attach(bin, &f, "rankkill");

	cr_assert(f.fired, "the tool never traced a rank: no rank killed");
	cr_expect(code >= MD_EXIT_DEADLOCK && code <= MD_EXIT_ERROR,
		  "exit code %d after a rank died, want 1, 2 or 3", code);
	expect_ranks_running(cur_job);
	(void)s;
	mf_free(m);
}
