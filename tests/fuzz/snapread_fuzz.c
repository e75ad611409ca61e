/*
 * snapread_fuzz.c - fuzz harness for the snapshot reader and the report
 * writers (libFuzzer interface; AFL++ links it with its driver too).
 * Built and run by scripts/fuzz.sh.  Each input is used three ways:
 *
 *  1. its bytes as a snapshot, read as a stream (fmemopen: the reader's
 *     pipe path) and as a regular file (a memfd) by the parallel reader
 *     with two threads from the first rank line on: the two must agree
 *     (the same result, the same snapshot written back);
 *  2. its bytes as the choices of a snapshot generator: a header,
 *     communicators with groups, remote groups and topologies, ranks
 *     with their states, calls, operations, threads, frames and
 *     libmdtrack.so records, written as JSON with values mostly in range
 *     (so most reach the analysis) and sometimes not;
 *  3. every snapshot that reads, from either, is written and read back,
 *     analysed, and given to every report writer (text with and without
 *     ranges, --github, JSON, DOT, JUnit, the dump).
 *
 * Whatever the bytes, the reader returns 0 with a snapshot or
 * -MD_E_INPUT without one, never crashes, never leaks (LeakSanitizer).
 * At exit the harness writes its counts ("reads N", "generated N",
 * "reports N") to the file $MD_FUZZ_COUNTS, if set: fuzz.sh closes the
 * target's stderr (one error line per bad input).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyze.h"
#include "md.h"
#include "mpicall.h"
#include "snap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long long reads, generated, reports;
static FILE *sink;
static int memfd = -1;

static void print_counts(void)
{
	const char *path = getenv("MD_FUZZ_COUNTS");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "reads %llu\ngenerated %llu\nreports %llu\n", reads,
			generated, reports);
		fclose(f);
	}
}

static void write_reports(const struct snap *s)
{
	static const struct anl_opts opts[] = {
		{ .format = ANL_FORMAT_TEXT },
		{ .format = ANL_FORMAT_TEXT, .all_ranks = true, .github = true },
		{ .format = ANL_FORMAT_JSON },
		{ .format = ANL_FORMAT_DOT },
	};
	struct anl_result *r = anl_analyze(s);

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		anl_report(r, &opts[i], sink);
	if (anl_write_junit(r, "fuzz", "/dev/null") != 0)
		abort();
	anl_dump(s, sink);
	anl_result_free(r);
	reports++;
}

/* s written as text (malloc'd, *len bytes). */
static char *written(const struct snap *s, size_t *len)
{
	char *text = NULL;
	FILE *mem = open_memstream(&text, len);

	if (!mem || snap_write(s, mem) != 0)
		abort();
	fclose(mem);
	return text;
}

/* A snapshot that read: it writes, reads back the same, and reports. */
static void use(struct snap *s)
{
	struct snap *back = NULL;
	size_t len;
	char *text = written(s, &len);
	FILE *f = fmemopen(text, len, "r");

	if (!f || snap_read(f, "fuzz-back", &back) != 0)
		abort();
	fclose(f);
	if (back->nranks != s->nranks || back->ncomms != s->ncomms)
		abort();
	write_reports(s);
	snap_free(back);
	free(text);
}

/* Read len bytes as a stream, and as a file by two threads; they must
 * agree.  Returns the stream's snapshot or NULL. */
static struct snap *read_both(const void *data, size_t len)
{
	struct snap_read_opts par = { .threads = 2, .parallel_min = 1 };
	struct snap *s = NULL, *p = NULL;
	FILE *f;
	int ret, pret;

	f = len ? fmemopen((void *)data, len, "r") : fopen("/dev/null", "r");
	if (!f)
		abort();
	ret = snap_read(f, "fuzz", &s);
	fclose(f);
	if (ret != 0 && ret != -MD_E_INPUT)
		abort();
	reads++;
	/* The memfd is a regular file: mapped, cut between the threads. */
	if (ftruncate(memfd, 0) || pwrite(memfd, data, len, 0) != (ssize_t)len)
		abort();
	f = fdopen(dup(memfd), "r");
	if (!f)
		abort();
	pret = snap_read_opts(f, "fuzz-parallel", &par, &p);
	fclose(f);
	if (pret != ret)
		abort();
	if (!ret) {
		size_t a, b;
		char *ta = written(s, &a), *tb = written(p, &b);

		if (a != b || memcmp(ta, tb, a) != 0)
			abort();
		free(ta);
		free(tb);
		snap_free(p);
	}
	return ret ? NULL : s;
}

/*
 * The generator: the input's bytes are its choices, 0 once they run out.
 */
struct gen {
	const uint8_t *p, *end;
	bool tame;	/* every value in range: the snapshot must read */
	FILE *out;
	int nranks, ncomms;
	int size[4], group[4][8], remote[4], rgroup[4][2];
};

static unsigned pick(struct gen *g, unsigned n)
{
	return n ? (g->p < g->end ? *g->p++ : 0) % n : 0;
}

/* Now and then (never once the bytes have run out). */
static bool rare(struct gen *g, unsigned n)
{
	return pick(g, n) == n - 1 && !g->tame;
}

/* Mostly in lo..hi, now and then anything near it. */
static long num(struct gen *g, long lo, long hi)
{
	unsigned c = g->tame ? 0 : pick(g, 256);

	if (c == 255)
		return lo - 1 - (long)pick(g, 3);
	if (c == 254)
		return hi + 1 + (long)pick(g, 3);
	return lo + (long)pick(g, (unsigned)(hi - lo + 1));
}

static const char *one(struct gen *g, const char *const *names)
{
	unsigned n = 0;

	while (names[n])
		n++;
	return rare(g, 256) ? "bogus" : names[pick(g, n)];
}

static const char *const mpi_calls[] = {
#define FZ_CALL(name, cls) "MPI_" #name,
	MD_MPI_CALLS(FZ_CALL)
#undef FZ_CALL
	NULL
};

static const char *call(struct gen *g)
{
	static const char *const common[] = {
		"MPI_Recv", "MPI_Send", "MPI_Wait", "MPI_Waitall",
		"MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Probe",
		"MPI_Test", "MPI_Iprobe", "MPI_Finalize", "MPI_Sendrecv",
		"MPI_Waitany", "MPI_Ssend", "MPI_Neighbor_allgather",
		"MPI_Win_fence", "MPI_Comm_split", NULL
	};

	return pick(g, 4) ? one(g, common) : one(g, mpi_calls);
}

static void gen_group(struct gen *g, int c, int size)
{
	int used = 0;

	for (int i = 0; i < size; i++) {
		int r = (int)pick(g, (unsigned)g->nranks);

		while (used & 1 << r)
			r = (r + 1) % g->nranks;
		used |= 1 << r;
		g->group[c][i] = r;
	}
}

static void gen_header(struct gen *g)
{
	g->nranks = 1 + (int)pick(g, 8);
	g->ncomms = 1 + (int)pick(g, 4);
	fprintf(g->out,
		"{\"format\":\"mpi-deadlock-snapshot\",\"version\":1,"
		"\"time\":1,"
		"\"starter_pid\":%d,\"looks\":%d,\"interval_ms\":%d,"
		"\"mpi\":\"%s\",\"nranks\":%d,\"ncomms\":%d}\n",
		(int)pick(g, 3), 1 + (int)pick(g, 3), (int)pick(g, 2) * 1000,
		pick(g, 2) ? "Open MPI 4.1.4" : "MPICH 4.0.2", g->nranks,
		g->ncomms);
}

/* The local rank of global rank r in communicator c, or -1. */
static int local_of(const struct gen *g, int c, int r)
{
	for (int i = 0; i < g->size[c]; i++)
		if (g->group[c][i] == r)
			return i;
	return -1;
}

static void gen_comm(struct gen *g, int c)
{
	static const char *const names[] = {
		"MPI_COMM_WORLD", "MPI_COMM_SELF", "split", "dup of world",
		"", NULL
	};
	int size = c ? 1 + (int)pick(g, (unsigned)g->nranks) : g->nranks;
	const char *sep = "";

	g->size[c] = size;
	if (c)
		gen_group(g, c, size);
	else
		for (int i = 0; i < size; i++)
			g->group[0][i] = i;
	fprintf(g->out, "{\"comm\":%d,\"id\":%d,\"name\":\"%s\",\"size\":%d,"
			"\"group\":[", c,
		g->tame ? 4 * c : c * (1 + (int)pick(g, 3)),
		c ? one(g, names) : "MPI_COMM_WORLD", size);
	for (int i = 0; i < size; i++, sep = ",")
		fprintf(g->out, "%s%d", sep, g->group[c][i]);
	fputs("]", g->out);
	g->remote[c] = c && !pick(g, 4) ? 1 + (int)pick(g, 2) : 0;
	/* Tame: the remote group is ranks outside the local one. */
	if (g->tame && g->remote[c] > g->nranks - size)
		g->remote[c] = g->nranks - size;
	if (g->remote[c]) {
		fprintf(g->out, ",\"remote_size\":%d,\"remote\":[",
			g->remote[c]);
		for (int i = 0, r = (int)pick(g, 8); i < g->remote[c]; i++) {
			r %= g->nranks;
			while (g->tame && (local_of(g, c, r) >= 0 ||
					   (i && g->rgroup[c][0] == r)))
				r = (r + 1) % g->nranks;
			g->rgroup[c][i] = r++;
			fprintf(g->out, "%s%d", i ? "," : "", g->rgroup[c][i]);
		}
		fputs("]", g->out);
	} else if (!pick(g, 5)) {
		/* A ring of the local ranks, some lists left empty. */
		fprintf(g->out, ",\"topo\":\"%s\",\"neighbors\":\"",
			one(g, snap_topo_names + 1));
		for (int i = 0; i < size; i++) {
			if (i)
				fputc(';', g->out);
			if (size > 1 && pick(g, 4))
				fprintf(g->out, "%d,%d", (i + size - 1) % size,
					(i + 1) % size);
		}
		fputs("\"", g->out);
	}
	fputs("}\n", g->out);
}

static void gen_op(struct gen *g, int r)
{
	static const int tags[] = { 0, 1, 7, -1, 99 };
	int c = (int)pick(g, (unsigned)g->ncomms), peer, global;
	int peers = g->remote[c] ? g->remote[c] : g->size[c];

	if (local_of(g, c, r) < 0)
		c = 0;
	peers = g->remote[c] ? g->remote[c] : g->size[c];
	peer = (int)num(g, -1, peers - 1);
	global = peer < 0 || peer >= peers ? -1
		 : g->remote[c]		  ? g->rgroup[c][peer]
					  : g->group[c][peer];
	if (rare(g, 256))
		global = (int)pick(g, (unsigned)g->nranks);
	fprintf(g->out, "{\"kind\":\"%s\",\"status\":\"%s\",\"comm\":%d,"
			"\"peer\":%d,\"peer_global\":%d,\"tag\":%d",
		one(g, snap_op_kind_names), one(g, snap_status_names), c, peer,
		global, tags[pick(g, 5)]);
	if (!pick(g, 4))
		fputs(",\"any_tag\":true", g->out);
	fprintf(g->out, ",\"length\":%u,\"request\":\"0x%x\"",
		4u << pick(g, 20), 0x1000 + (unsigned)pick(g, 8) * 0x100);
	if (!pick(g, 3))
		fprintf(g->out, ",\"source\":\"%s\"",
			one(g, snap_source_names));
	if (!pick(g, 3))
		fprintf(g->out, ",\"actual\":{\"peer\":%d,\"tag\":%d}",
			(int)pick(g, (unsigned)peers), tags[pick(g, 5)]);
	if (!pick(g, 2))
		fprintf(g->out, ",\"datatype\":\"MPI_INT\",\"count\":%u",
			(unsigned)pick(g, 5));
	if (!pick(g, 3))
		fputs(",\"extra\":[\"Receive: 0x1\",\"Data: 1 instances\"]",
		      g->out);
	fputs("}", g->out);
}

static void gen_thread(struct gen *g, int r, int t)
{
	static const char *const funcs[] = {
		"PMPI_Recv", "PMPI_Wait", "MPI_Barrier", "opal_progress",
		"poll", "sleep", "nanosleep", "main", "worker", "slow_sum",
		"mpi_recv_", "internal_Waitany", NULL
	};
	static const char *const objects[] = {
		"libmpi.so.40", "/home/u/app", "libc.so.6", "libmpich.so.12",
		"libpthread.so.0", NULL
	};
	int nframes = (int)pick(g, 4);

	fprintf(g->out, "%s{\"tid\":%d", t ? "," : "", 100 * r + t);
	if (pick(g, 3))
		fprintf(g->out, ",\"call\":\"%s\"", call(g));
	if (!pick(g, 8))
		fputs(",\"progress_thread\":true", g->out);
	fputs(",\"frames\":[", g->out);
	for (int f = 0; f < nframes; f++) {
		fprintf(g->out, "%s{\"pc\":\"0x%x\",\"func\":\"%s\","
				"\"object\":\"%s\"",
			f ? "," : "", 0x400000 + f * 16, one(g, funcs),
			one(g, objects));
		if (pick(g, 2))
			fprintf(g->out, ",\"file\":\"a%d.c\",\"line\":%d",
				(int)pick(g, 2), (int)pick(g, 40));
		fputs("}", g->out);
	}
	fputs("]", g->out);
	if (nframes) {
		fprintf(g->out, ",\"mpi_frame\":%ld", num(g, -1, nframes - 1));
		fprintf(g->out, ",\"user_frame\":%ld", num(g, -1, nframes - 1));
	}
	if (!pick(g, 8))
		fprintf(g->out, ",\"called_back_by\":\"%s\"", call(g));
	fputs("}", g->out);
}

static void gen_track(struct gen *g, int r)
{
	static const char *const specials[] = { "any", "proc_null", "root" };
	int n = 1 + (int)pick(g, 4);

	fprintf(g->out, ",\"track\":{\"dropped\":%d,\"recs\":[",
		(int)(pick(g, 8) == 7));
	for (int i = 0; i < n; i++) {
		int c = (int)pick(g, (unsigned)g->ncomms);

		fprintf(g->out, "%s{\"kind\":\"%s\",\"call\":\"%s\","
				"\"seq\":%d,\"request\":\"0x%x\",\"comm\":%d",
			i ? "," : "", one(g, snap_track_kind_names), call(g),
			(int)pick(g, 6), 0x1000 + (unsigned)pick(g, 8) * 0x100,
			local_of(g, c, r) >= 0 ? c : 0);
		if (pick(g, 4))
			fprintf(g->out, ",\"peer\":%d", (int)pick(g, 8));
		else
			fprintf(g->out, ",\"peer\":\"%s\"",
				specials[pick(g, 3)]);
		fprintf(g->out, ",\"tag\":%d,\"count\":%d,\"ncalls\":%d,"
				"\"file\":\"a.c\",\"line\":%d}",
			(int)pick(g, 3), (int)pick(g, 5), 1 + (int)pick(g, 4),
			(int)pick(g, 40));
	}
	fputs("]}", g->out);
}

static void gen_rank(struct gen *g, int r)
{
	static const char *const reasons[] = {
		"permission denied", "exited", NULL
	};
	const char *sep = "";
	int nops = (int)pick(g, 4), nthreads = (int)pick(g, 3);

	fprintf(g->out, "{\"rank\":%d,\"pid\":%d,\"host\":\"n%d\","
			"\"exe\":\"/home/u/app\",\"state\":\"%s\","
			"\"progress\":\"%s\"",
		r, 1000 + r, (int)pick(g, 2),
		pick(g, 4) ? "collected" : one(g, snap_state_names),
		one(g, snap_progress_names));
	if (!pick(g, 6))
		fprintf(g->out, ",\"stopped_by\":%d", 19 * (int)pick(g, 2));
	if (!pick(g, 3))
		fprintf(g->out, ",\"thread_level\":\"%s\"",
			one(g, snap_thread_level_names));
	if (!pick(g, 8))
		fputs(",\"finalized\":true", g->out);
	if (pick(g, 4))
		fprintf(g->out, ",\"call\":\"%s\",\"site\":{\"func\":\"main\","
				"\"file\":\"a.c\",\"line\":%d}",
			call(g), (int)pick(g, 40));
	fputs(",\"members\":[", g->out);
	for (int c = 0; c < g->ncomms; c++)
		if (local_of(g, c, r) >= 0 || rare(g, 256)) {
			fprintf(g->out, "%s[%d,%d]", sep, c,
				local_of(g, c, r) >= 0 ? local_of(g, c, r) : 0);
			sep = ",";
		}
	fputs("]", g->out);
	if (!pick(g, 6))
		fputs(",\"queues\":{\"none\":\"no DLL\"}", g->out);
	if (!pick(g, 3))
		fprintf(g->out, ",\"unexpected\":true,\"ob1\":%s",
			pick(g, 2) ? "true" : "false");
	fputs(",\"ops\":[", g->out);
	for (int i = 0; i < nops; i++) {
		if (i)
			fputc(',', g->out);
		gen_op(g, r);
	}
	fputs("],\"threads\":[", g->out);
	for (int t = 0; t < nthreads; t++)
		gen_thread(g, r, t);
	fputs("]", g->out);
	if (!pick(g, 3))
		gen_track(g, r);
	if (!pick(g, 8))
		fprintf(g->out, ",\"reason\":\"%s\"", one(g, reasons));
	fputs("}\n", g->out);
}

/* A snapshot of the input's choices, as text (malloc'd, *len bytes);
 * tame: with every value in range. */
static char *generate(const uint8_t *data, size_t size, bool tame,
		      size_t *len)
{
	struct gen g = { .p = data, .end = data + size, .tame = tame };
	char *text = NULL;

	g.out = open_memstream(&text, len);
	if (!g.out)
		abort();
	gen_header(&g);
	for (int c = 0; c < g.ncomms; c++)
		gen_comm(&g, c);
	for (int r = 0; r < g.nranks; r++)
		gen_rank(&g, r);
	if (!pick(&g, 8))
		fputs("{\"note\":\"the DLL said something\"}\n", g.out);
	fclose(g.out);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap *s;
	size_t len;
	char *text;
	FILE *f;
	int ret;

	if (!sink) {
		sink = fopen("/dev/null", "w");
		memfd = memfd_create("snapshot", 0);
		if (!sink || memfd < 0)
			abort();
		atexit(print_counts);
	}
	if ((s = read_both(data, size))) {
		use(s);
		snap_free(s);
	}
	/* The generated snapshot, read once (the round trip in use() reads
	 * it again): the reader's own cases are the raw input's.  One that
	 * does not read (a value out of range) is made again with every
	 * value in range, which must read: so every input reaches the
	 * analysis and the writers at least once. */
	for (int tame = 0; tame < 2; tame++) {
		text = generate(data, size, tame, &len);
		generated++;
		f = fmemopen(text, len, "r");
		if (!f)
			abort();
		ret = snap_read(f, tame ? "generated-tame" : "generated", &s);
		fclose(f);
		if (ret != 0 && tame)
			fprintf(stderr, "a tame snapshot that does not read:\n%s",
				text);
		free(text);
		if (ret != 0 && (ret != -MD_E_INPUT || tame))
			abort();
		if (!ret) {
			use(s);
			snap_free(s);
			break;
		}
	}
	return 0;
}
