/*
 * fault_fake_test.c - faults at every phase of a whole collection on fake
 * targets: fault_test.c's table (one row per phase of COL_PHASES in
 * collect.h, one column per fault) without an MPI job.  The fake job is
 * a starter with an MPIR process table and two ranks that load a libmpi
 * (tests/fakejob, built by the Makefile, laid out in fake memory at load
 * biases of our choosing) naming the fake DLL (tests/fakedll) in
 * MPIR_dll_name, each stopped in MPI_Recv; the collector reaches them
 * through its target factory (col_opts.target).  ob1's walk comes and
 * finds no ob1 plug-in: its phase does nothing, but it comes.
 *
 * The fault fires at the start of the phase, the first time the phase
 * comes; two looks, so that every phase comes once before a look reads
 * the job again.  Afterwards every fake that still exists was detached
 * as often as it was attached and is in the state it was in before
 * (stopped when someone else stopped it), and the snapshot names what
 * could not be read.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../collector/elfsym.h"
#include "../collector/target.h"
#include "collect.h"
#include "md.h"
#include "snap.h"
#include "support/faults.h"
#include "support/mpijob.h"
#include "support/tracee.h"

/* ---- the fake job ---- */

#define NRANKS 2		/* the fake DLL's MPI_COMM_WORLD */
#define LOOKS 2
#define STARTER_PID 4000
#define RANK_PID(i) (4001 + (i))
#define EXE_BIAS 0x555555554000ULL
#define LIB_BIAS 0x7f0000000000ULL
#define STACK 0x7ffe00000000ULL
#define TABLE 0x600000000ULL	/* MPIR_proctable and its strings */
/* The requests the fake DLL names (Send: 0x1000, Receive: 0x2000). */
#define REQ_SEND 0x1000
#define REQ_RECV 0x2000

struct fjob {
	char *dir;		/* $MD_BUILD/tests/fakejob */
	char *dll;		/* the fake DLL */
	struct tgt *starter;
	struct tgt *ranks[NRANKS];
	struct tgt *stop_on_seize;	/* gets SIGSTOP right after a seize */
	int seizes;		/* attaches made through the factory */
};

static char *build_path(const char *name)
{
	const char *build = getenv("MD_BUILD");

	return xasprintf("%s/tests/%s", build ? build : "build", name);
}

/*
 * Map the ELF file at path into fake t at bias as ld.so would: a maps
 * line per PT_LOAD (appended to maps) and, when load, the segment's
 * bytes (zero-filled to its memory size) as a region.
 */
static void map_object(struct tgt *t, FILE *maps, const char *path,
		       uint64_t bias, bool load)
{
	size_t len;
	unsigned char *file = (unsigned char *)mj_slurp_len(path, &len);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
	struct stat st;

	cr_assert_not_null(file, "%s: run make (it builds the fake job)", path);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(len > sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG));
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(file + eh->e_phoff +
						(size_t)i * eh->e_phentsize);
		uint64_t start = bias + ph->p_vaddr, page = start & ~0xfffULL;
		uint64_t end = (start + ph->p_memsz + 0xfff) & ~0xfffULL;
		unsigned char *seg;

		if (ph->p_type != PT_LOAD)
			continue;
		fprintf(maps, "%llx-%llx %c%c%cp %08llx %02x:%02x %llu %s\n",
			(unsigned long long)page, (unsigned long long)end,
			ph->p_flags & PF_R ? 'r' : '-',
			ph->p_flags & PF_W ? 'w' : '-',
			ph->p_flags & PF_X ? 'x' : '-',
			(unsigned long long)(ph->p_offset & ~0xfffULL),
			major(st.st_dev), minor(st.st_dev),
			(unsigned long long)st.st_ino, path);
		if (!load)
			continue;
		seg = xcalloc(1, ph->p_memsz);
		memcpy(seg, file + ph->p_offset, ph->p_filesz);
		tgt_fake_add_region(t, start, seg, ph->p_memsz);
		free(seg);
	}
	free(file);
}

/* The runtime address of symbol name of the file at path, at bias. */
static uint64_t sym_at(const char *path, uint64_t bias, const char *name)
{
	struct es_image *img = NULL;
	uint64_t v = 0;

	cr_assert_eq(es_image_open(path, &img), 0, "%s", path);
	cr_assert_eq(es_lookup(img, name, &v), 0, "%s in %s", name, path);
	es_image_free(img);
	return bias + v;
}

/* A fake's maps text: what map_object wrote, then the rank's stack. */
static void set_maps(struct tgt *t, char *text, bool stack)
{
	char *all = xasprintf("%s%s", text, stack ? "7ffdfffff000-7ffe00001000 "
				   "rw-p 00000000 00:00 0          [stack]\n"
						  : "");

	tgt_fake_set_maps(t, all);
	free(all);
	free(text);
}

static struct tgt *fake_starter(struct fjob *j, const char *app)
{
	struct tgt *t = tgt_fake_new(STARTER_PID);
	char *mpirun = xasprintf("%s/mpirun", j->dir), *text = NULL;
	unsigned char table[NRANKS * 24] = { 0 };
	char strings[4096];
	size_t tlen = 0, off = 0;
	uint64_t tab = TABLE, strs = TABLE + sizeof(table);
	int state = 1, size = NRANKS;
	FILE *maps = open_memstream(&text, &tlen);

	/* The table's symbols first: a read takes the first region. */
	tgt_fake_add_region(t, sym_at(mpirun, EXE_BIAS, "MPIR_debug_state"),
			    &state, sizeof(state));
	tgt_fake_add_region(t, sym_at(mpirun, EXE_BIAS, "MPIR_proctable_size"),
			    &size, sizeof(size));
	tgt_fake_add_region(t, sym_at(mpirun, EXE_BIAS, "MPIR_proctable"), &tab,
			    sizeof(tab));
	for (int i = 0; i < NRANKS; i++) {
		uint64_t host = strs + off, exe;
		int pid = RANK_PID(i);

		off += (size_t)sprintf(strings + off, "localhost") + 1;
		exe = strs + off;
		off += (size_t)sprintf(strings + off, "%s", app) + 1;
		memcpy(table + i * 24, &host, 8);
		memcpy(table + i * 24 + 8, &exe, 8);
		memcpy(table + i * 24 + 16, &pid, 4);
	}
	tgt_fake_add_region(t, tab, table, sizeof(table));
	tgt_fake_add_region(t, strs, strings, off);
	map_object(t, maps, mpirun, EXE_BIAS, false);
	fclose(maps);
	set_maps(t, text, false);
	tgt_fake_set_exe(t, mpirun);
	tgt_fake_set_stat(t, 'S', 1, "mpirun");
	free(mpirun);
	return t;
}

/* A rank stopped at the entry of MPI_Recv, called from nowhere (its
 * return address 0 ends the stack), with the fake DLL's two requests
 * waited on (every word of them a sync object's address, not 1). */
static struct tgt *fake_rank(struct fjob *j, int i, const char *app)
{
	struct tgt *t = tgt_fake_new(RANK_PID(i));
	char *lib = xasprintf("%s/libmpi.so.40", j->dir), *text = NULL;
	char dll_name[256] = { 0 };
	uint64_t req[16], stack[64] = { 0 };
	struct tgt_regs regs = { { 0 } };
	size_t tlen = 0;
	FILE *maps = open_memstream(&text, &tlen);
	int tid = RANK_PID(i);

	snprintf(dll_name, sizeof(dll_name), "%s", j->dll);
	tgt_fake_add_region(t, sym_at(lib, LIB_BIAS, "MPIR_dll_name"),
			    dll_name, sizeof(dll_name));
	for (size_t k = 0; k < sizeof(req) / sizeof(*req); k++)
		req[k] = 0x7ffd12345678ULL;
	tgt_fake_add_region(t, REQ_SEND, req, sizeof(req));
	tgt_fake_add_region(t, REQ_RECV, req, sizeof(req));
	tgt_fake_add_region(t, STACK, stack, sizeof(stack));
	map_object(t, maps, app, EXE_BIAS, true);
	map_object(t, maps, lib, LIB_BIAS, true);
	fclose(maps);
	set_maps(t, text, true);
	tgt_fake_set_exe(t, app);
	tgt_fake_set_stat(t, 'S', STARTER_PID, "app");
	tgt_fake_set_threads(t, &tid, 1);
	regs.r[TGT_REG_PC] = sym_at(lib, LIB_BIAS, "MPI_Recv");
	regs.r[TGT_REG_SP] = STACK;
	tgt_fake_set_regs(t, tid, &regs);
	free(lib);
	return t;
}

static void fjob_build(struct fjob *j)
{
	char *app;

	j->dir = build_path("fakejob");
	j->dll = build_path("fakedll.so");
	app = xasprintf("%s/app", j->dir);
	j->starter = fake_starter(j, app);
	for (int i = 0; i < NRANKS; i++) {
		j->ranks[i] = fake_rank(j, i, app);
		tgt_fake_link(j->starter, j->ranks[i]);
		tgt_fake_link(j->ranks[i], j->starter);
	}
	free(app);
}

static void fjob_free(struct fjob *j)
{
	for (int i = 0; i < NRANKS; i++)
		tgt_free(j->ranks[i]);
	tgt_free(j->starter);
	free(j->dir);
	free(j->dll);
}

/* The collector's target factory over the fake job. */
static int fjob_target(void *ctx, int pid, bool attach, struct tgt **out)
{
	struct fjob *j = ctx;
	struct tgt *t = pid == STARTER_PID ? j->starter : NULL;
	int rc;

	for (int i = 0; i < NRANKS && !t; i++)
		if (pid == RANK_PID(i))
			t = j->ranks[i];
	*out = NULL;
	if (!t)
		return -MD_E_NOSUCH;
	if (!attach)
		return tgt_fake_open(t, out);
	rc = tgt_fake_attach(t, out);
	j->seizes += rc == 0;
	if (rc == 0 && t == j->stop_on_seize) {
		tgt_fake_kill(t, SIGSTOP);
		j->stop_on_seize = NULL;
	}
	return rc;
}

/* ---- the faults ---- */

struct cell {
	enum col_phase phase;
	enum fault fault;
};

struct inject {
	struct cell cell;
	struct fjob *job;
	bool fired;
	int victim;	/* the rank the fault hit: the first the phase came
			 * for (the DLL setup comes for one rank only) */
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	stop_flag = sig;
}

static int fire(void *ctx, enum col_phase phase, int rank, int pid)
{
	struct inject *in = ctx;
	struct tgt *v;

	(void)pid;
	if (in->fired || phase != in->cell.phase)
		return 0;
	cr_assert(rank >= 0 && rank < NRANKS, "phase %s for rank %d",
		  col_phase_name(phase), rank);
	in->fired = true;
	in->victim = rank;
	v = in->job->ranks[rank];
	switch (in->cell.fault) {
	case F_RANK_EXITS:
		tgt_fake_gone(v);
		break;
	case F_READ_FAILS:
		tgt_fake_fail_reads(v, -MD_E_PERM);
		break;
	case F_RANK_STOPPED:
		/* At the attach, the SIGSTOP comes between the seize and the
		 * wait for the stop, as it may on a real job where kill()
		 * and PTRACE_SEIZE follow each other: the tool takes it in a
		 * signal-delivery-stop and must give it back. */
		if (phase == COL_PHASE_ATTACH)
			in->job->stop_on_seize = v;
		else
			tgt_fake_kill(v, SIGSTOP);
		break;
	case F_STARTER_EXITS:
		tgt_fake_gone(in->job->starter);
		break;
	case F_SIGINT:
		raise(SIGINT);
		break;
	case F_SIGTERM:
		raise(SIGTERM);
		break;
	default:
		break;
	}
	return 0;
}

static void restore_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

static int collect(struct fjob *j, struct inject *in, struct snap **s,
		   char **err)
{
	struct col_opts o = { .pid = STARTER_PID, .looks = LOOKS,
			      .interval_ms = 1, .stop = &stop_flag,
			      .target = fjob_target, .target_ctx = j };
	struct tr_capture cap;
	int rc;

	if (in) {
		o.fault = fire;
		o.fault_ctx = in;
	}
	stop_flag = 0;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	tr_stderr_begin(&cap);
	rc = col_collect(&o, s);
	*err = tr_stderr_end(&cap);
	return rc;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* The snapshot says what it could not read of the victim. */
static bool names_what_was_not_read(const struct snap_rank *r)
{
	if (r->state != SNAP_RANK_COLLECTED)
		return r->reason && *r->reason;
	return r->queues == SNAP_QUEUES_NONE && r->queues_reason &&
	       *r->queues_reason;
}

/*
 * Every fake that still exists: attached and detached alike (each look
 * attached every rank not lost, unless interrupted), no longer traced,
 * in the state it was in before.
 */
static void check_fakes(const struct inject *in, bool interrupted)
{
	const struct cell *c = &in->cell;
	const struct fjob *j = in->job;
	struct tgt_stat st;

	for (int i = 0; i < NRANKS; i++) {
		struct tgt *t = j->ranks[i];
		bool stopped = i == in->victim && c->fault == F_RANK_STOPPED;
		bool lost = i == in->victim && (c->fault == F_RANK_EXITS ||
						c->fault == F_READ_FAILS);

		if (tgt_stat(t, &st) < 0)
			continue;	/* gone: nothing to restore */
		cr_expect_eq(tgt_fake_detaches(t), tgt_fake_attaches(t),
			     "%s at %s: rank %d attached %d times, detached "
			     "%d", fault_names[c->fault],
			     col_phase_name(c->phase), i,
			     tgt_fake_attaches(t), tgt_fake_detaches(t));
		if (!interrupted && !lost)
			cr_expect_eq(tgt_fake_attaches(t), LOOKS,
				     "%s at %s: rank %d attached %d times",
				     fault_names[c->fault],
				     col_phase_name(c->phase), i,
				     tgt_fake_attaches(t));
		cr_expect_eq(st.state, stopped ? 'T' : 'S',
			     "%s at %s: rank %d state %c, want %s",
			     fault_names[c->fault], col_phase_name(c->phase),
			     i, st.state, stopped ? "stopped as it was left"
						  : "running");
	}
	if (tgt_stat(j->starter, &st) == 0) {
		cr_expect_eq(tgt_fake_attaches(j->starter), 0, "mpirun stopped");
		cr_expect_eq(st.state, 'S');
	}
}

ParameterizedTestParameters(fault_fake, every_phase)
{
	static struct cell cells[COL_PHASE_COUNT * F_COUNT];
	size_t n = 0;

	for (int p = 0; p < COL_PHASE_COUNT; p++)
		for (int f = 0; f < F_COUNT; f++)
			cells[n++] = (struct cell){ p, f };
	return cr_make_param_array(struct cell, cells, n);
}

ParameterizedTest(struct cell *c, fault_fake, every_phase,
		  .fini = restore_signals, .timeout = 60)
{
	struct fjob j = { 0 };
	struct inject in = { .cell = *c, .job = &j, .victim = -1 };
	bool interrupted = c->fault == F_SIGINT || c->fault == F_SIGTERM;
	struct snap *s = NULL;
	const struct snap_rank *v;
	char *err;
	int rc;

	cr_log_info("fault: %s at %s", fault_names[c->fault],
		    col_phase_name(c->phase));
	fjob_build(&j);
	rc = collect(&j, &in, &s, &err);
	cr_expect(in.fired, "%s at %s: the phase never came",
		  fault_names[c->fault], col_phase_name(c->phase));
	check_fakes(&in, interrupted);
	if (interrupted) {
		cr_expect_eq(rc, -MD_E_INTR, "rc %d; stderr: %s", rc, err);
		cr_expect_null(s);
		cr_expect_not_null(strstr(err, "every rank was detached"),
				   "stderr: %s", err);
	} else {
		cr_assert_eq(rc, 0, "%s at %s: rc %d; stderr: %s",
			     fault_names[c->fault], col_phase_name(c->phase),
			     rc, err);
		cr_assert_eq(s->nranks, NRANKS);
		cr_assert(in.victim >= 0 && in.victim < NRANKS);
		v = &s->ranks[in.victim];
		if (c->fault == F_RANK_EXITS || c->fault == F_READ_FAILS)
			cr_expect(names_what_was_not_read(v),
				  "%s at %s: rank %d state %d reason %s "
				  "queues %d (%s)", fault_names[c->fault],
				  col_phase_name(c->phase), in.victim,
				  v->state, v->reason ? v->reason : "-",
				  v->queues,
				  v->queues_reason ? v->queues_reason : "-");
		if (c->fault == F_READ_FAILS)
			fault_expect_unread_named(s, in.victim, c->fault,
						  col_phase_name(c->phase));
		/* The last look found it stopped: the snapshot says by
		 * what, and so does the verdict; no other rank is said to
		 * be (our interrupt's stop is no group-stop). */
		if (c->fault == F_RANK_STOPPED)
			fault_expect_stopped(s, in.victim, c->fault,
					     col_phase_name(c->phase));
		/* The ranks outlive it here: read whole in every look. */
		if (c->fault == F_STARTER_EXITS) {
			fault_expect_starter_gone(s, err, c->fault,
						  col_phase_name(c->phase));
			for (int i = 0; i < NRANKS; i++)
				cr_expect_eq(s->ranks[i].queues,
					     SNAP_QUEUES_OK, "rank %d: %s", i,
					     or_empty(s->ranks[i].reason));
		}
		for (int i = 0; i < NRANKS; i++)
			if (i != in.victim || c->fault != F_RANK_STOPPED)
				cr_expect_eq(s->ranks[i].stopped_by, 0,
					     "%s at %s: rank %d stopped by "
					     "%d", fault_names[c->fault],
					     col_phase_name(c->phase), i,
					     s->ranks[i].stopped_by);
	}
	free(err);
	snap_free(s);
	fjob_free(&j);
}

/* Without a fault the fake job is read whole: the table above cannot
 * pass for want of anything to read. */
Test(fault_fake, without_a_fault_every_rank_is_read_whole)
{
	struct fjob j = { 0 };
	struct snap *s = NULL;
	char *err;
	int rc;

	fjob_build(&j);
	rc = collect(&j, NULL, &s, &err);
	cr_assert_eq(rc, 0, "stderr: %s", err);
	cr_assert_eq(s->nranks, NRANKS);
	cr_expect_eq(s->starter_pid, STARTER_PID);
	cr_expect_str_eq(s->impl ? s->impl : "", "Open MPI");
	for (int i = 0; i < NRANKS; i++) {
		const struct snap_rank *r = &s->ranks[i];
		const struct snap_op *recv;

		cr_assert_eq(r->state, SNAP_RANK_COLLECTED, "rank %d: %s", i,
			     r->reason ? r->reason : "-");
		cr_expect_eq(r->pid, RANK_PID(i));
		cr_expect_eq(r->progress, SNAP_PROGRESS_STABLE, "rank %d", i);
		cr_assert_eq(r->queues, SNAP_QUEUES_OK, "rank %d: %s", i,
			     r->queues_reason ? r->queues_reason : "-");
		cr_expect_eq(r->nmembers, 1, "rank %d: MPI_COMM_WORLD", i);
		cr_assert_eq(r->nops, 2, "rank %d", i);
		cr_expect_eq(r->ops[0].kind, SNAP_OP_SEND);
		cr_expect_eq(r->ops[0].peer_global, 1);
		cr_expect_eq(r->ops[0].tag, 7);
		recv = &r->ops[1];
		cr_expect_eq(recv->kind, SNAP_OP_RECV);
		cr_expect_eq(recv->peer_global, -1, "from any source");
		/* The DLL's "complete" corrected from req_complete's word,
		 * read through the fake's memory and the DWARF's offset. */
		cr_expect_eq(recv->status, SNAP_ST_PENDING);
		cr_expect(recv->status_corrected);
		cr_assert_eq(r->nthreads, 1, "rank %d", i);
		cr_expect_eq(r->threads[0].tid, RANK_PID(i));
		cr_assert_geq(r->threads[0].nframes, 1, "rank %d unwound", i);
		cr_expect_str_eq(r->threads[0].frames[0].func, "MPI_Recv");
		cr_expect_str_eq(r->mpi_call ? r->mpi_call : "", "MPI_Recv",
				 "rank %d", i);
		cr_expect_eq(tgt_fake_attaches(j.ranks[i]), LOOKS);
		cr_expect_eq(tgt_fake_detaches(j.ranks[i]), LOOKS);
	}
	cr_expect_eq(tgt_fake_attaches(j.starter), 0);
	free(err);
	snap_free(s);
	fjob_free(&j);
}

/* ---- ranks found outside MPI in the last look ---- */

struct moves {
	struct fjob *job;
	int at;		/* at rank 0's at-th attach (1: the first) ... */
	bool into_mpi;	/* ... it goes to MPI_Recv's entry, or main's */
	int attaches;
};

/* Rank 0 at the entry of MPI_Recv or, outside MPI, of main; its return
 * address 0 ends the stack either way. */
static void put_rank0(struct fjob *j, bool in_mpi)
{
	char *path = xasprintf("%s/%s", j->dir, in_mpi ? "libmpi.so.40"
						       : "app");
	struct tgt_regs regs = { { 0 } };

	regs.r[TGT_REG_PC] = sym_at(path, in_mpi ? LIB_BIAS : EXE_BIAS,
				    in_mpi ? "MPI_Recv" : "main");
	regs.r[TGT_REG_SP] = STACK;
	tgt_fake_set_regs(j->ranks[0], RANK_PID(0), &regs);
	free(path);
}

static int move_rank0(void *ctx, enum col_phase phase, int rank, int pid)
{
	struct moves *m = ctx;

	(void)pid;
	if (phase == COL_PHASE_ATTACH && rank == 0 && ++m->attaches == m->at)
		put_rank0(m->job, m->into_mpi);
	return 0;
}

static struct snap *collect_moves(struct fjob *j, struct moves *m)
{
	struct col_opts o = { .pid = STARTER_PID, .looks = LOOKS,
			      .interval_ms = 1, .stop = &stop_flag,
			      .target = fjob_target, .target_ctx = j,
			      .fault = move_rank0, .fault_ctx = m };
	struct tr_capture cap;
	struct snap *s = NULL;
	char *err;
	int rc;

	stop_flag = 0;
	tr_stderr_begin(&cap);
	rc = col_collect(&o, &s);
	err = tr_stderr_end(&cap);
	cr_assert_eq(rc, 0, "stderr: %s", err);
	free(err);
	for (int i = 0; i < NRANKS; i++)
		cr_expect_eq(tgt_fake_detaches(j->ranks[i]),
			     tgt_fake_attaches(j->ranks[i]), "rank %d", i);
	return s;
}

/* A rank outside MPI in both looks is stopped and read COL_RELOOKS times
 * more (it may poll and be caught between two calls each time), and no
 * more; the rank in MPI is read once a look. */
Test(fault_fake, rank_outside_mpi_is_looked_at_again)
{
	struct fjob j = { 0 };
	struct moves m = { .job = &j };
	struct snap *s;

	fjob_build(&j);
	put_rank0(&j, false);
	s = collect_moves(&j, &m);
	cr_expect_eq(tgt_fake_attaches(j.ranks[0]), LOOKS + COL_RELOOKS);
	cr_expect_eq(tgt_fake_attaches(j.ranks[1]), LOOKS);
	cr_expect_null(s->ranks[0].mpi_call);
	cr_expect_str_eq(or_empty(s->ranks[0].call_func), "main");
	cr_expect_eq(s->ranks[0].progress, SNAP_PROGRESS_STABLE);
	cr_expect_str_eq(or_empty(s->ranks[1].mpi_call), "MPI_Recv");
	snap_free(s);
	fjob_free(&j);
}

/* Found in MPI when looked at again, the rank shows that call and is not
 * looked at once more; it moved into the call, so it is not stable. */
Test(fault_fake, rank_found_in_mpi_when_looked_at_again_shows_its_call)
{
	struct fjob j = { 0 };
	struct moves m = { .job = &j, .at = LOOKS + 1, .into_mpi = true };
	struct snap *s;

	fjob_build(&j);
	put_rank0(&j, false);
	s = collect_moves(&j, &m);
	cr_expect_eq(tgt_fake_attaches(j.ranks[0]), LOOKS + 1);
	cr_expect_str_eq(or_empty(s->ranks[0].mpi_call), "MPI_Recv");
	cr_expect_eq(s->ranks[0].progress, SNAP_PROGRESS_CHANGED);
	snap_free(s);
	fjob_free(&j);
}

/* A rank that moved between the looks (in MPI in the first, outside it
 * in the last) is not looked at again: it does not stand still. */
Test(fault_fake, moving_rank_outside_mpi_is_not_looked_at_again)
{
	struct fjob j = { 0 };
	struct moves m = { .job = &j, .at = LOOKS, .into_mpi = false };
	struct snap *s;

	fjob_build(&j);
	s = collect_moves(&j, &m);
	cr_expect_eq(tgt_fake_attaches(j.ranks[0]), LOOKS);
	cr_expect_null(s->ranks[0].mpi_call);
	cr_expect_eq(s->ranks[0].progress, SNAP_PROGRESS_CHANGED);
	snap_free(s);
	fjob_free(&j);
}

/* ---- ranks with a thread that does not stop ---- */

struct waits {
	struct fjob *job;
	int n;
	int seized_before[4 * NRANKS];	/* attaches made by each wait */
	long long deadline[4 * NRANKS];
};

static void saw_wait(void *ctx, struct tgt *t, long long deadline)
{
	struct waits *w = ctx;

	(void)t;
	if (w->n < 4 * NRANKS) {
		w->seized_before[w->n] = w->job->seizes;
		w->deadline[w->n++] = deadline;
	}
}

/*
 * Every rank has a thread that never stops.  Waiting for one rank's
 * stops after another would cost a stop timeout per rank: the collector
 * seizes and interrupts every rank of a look before it waits for the
 * first stop, and waits for all of them until one deadline.  Told by the
 * order of the fake's calls, not by a clock.
 */
Test(fault_fake, stops_of_all_ranks_are_awaited_together_until_one_deadline)
{
	struct fjob j = { 0 };
	struct waits w = { .job = &j };
	struct snap *s = NULL;
	char *err;
	int rc;

	fjob_build(&j);
	for (int i = 0; i < NRANKS; i++) {
		int stuck = RANK_PID(i) + 100;

		tgt_fake_set_stuck(j.ranks[i], &stuck, 1);
		tgt_fake_on_wait(j.ranks[i], saw_wait, &w);
	}
	rc = collect(&j, NULL, &s, &err);
	cr_assert_eq(rc, 0, "stderr: %s", err);
	cr_assert_eq(w.n, LOOKS * NRANKS, "one wait per rank and look");
	for (int k = 0; k < w.n; k++) {
		int look = k / NRANKS;

		cr_expect_eq(w.seized_before[k], (look + 1) * NRANKS,
			     "wait %d came after %d seizes, want every rank "
			     "of look %d seized first", k, w.seized_before[k],
			     look + 1);
		cr_expect_eq(w.deadline[k], w.deadline[look * NRANKS],
			     "wait %d: its own deadline", k);
	}
	for (int i = 0; i < NRANKS; i++) {
		char *want = xasprintf("rank %d (pid %d): thread %d did not "
				       "stop", i, RANK_PID(i),
				       RANK_PID(i) + 100);
		bool named = false;

		for (int k = 0; k < s->nnotes; k++)
			named |= strstr(s->notes[k], want) != NULL;
		cr_expect(named, "no note: %s", want);
		cr_expect_eq(s->ranks[i].state, SNAP_RANK_COLLECTED);
		cr_expect_eq(tgt_fake_detaches(j.ranks[i]),
			     tgt_fake_attaches(j.ranks[i]), "rank %d", i);
		free(want);
	}
	free(err);
	snap_free(s);
	fjob_free(&j);
}
