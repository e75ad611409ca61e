/*
 * mdtrack_test.c - libmdtrack.so itself (track/mdtrack.c), with a fake
 * MPI: a program built here, linked with neither libmpi nor the library,
 * loads the library and then a fake PMPI_Isend/PMPI_Irecv with dlopen
 * (as a Python rank loads its MPI after start), calls MPI_Isend and
 * MPI_Irecv through the library's wrappers from two threads, and prints
 * what the fake received and what the table holds.  The program is built
 * with the mpi.h the library was built with (mpicc --showme:compile).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "mdtrack.h"
#include "support/elf_fixture.h"

static const char fake_src[] =
	"#include <mpi.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"static char reqs[4][64];\n"
	"int PMPI_Isend(const void *b, int c, MPI_Datatype d, int dst, int tag,\n"
	"	       MPI_Comm comm, MPI_Request *r)\n"
	"{\n"
	"	printf(\"isend %p %d %p %d %d %p\\n\", b, c, (void *)d, dst, tag,\n"
	"	       (void *)comm);\n"
	"	*r = (MPI_Request)(void *)reqs[tag & 3];\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Irecv(void *b, int c, MPI_Datatype d, int src, int tag,\n"
	"	       MPI_Comm comm, MPI_Request *r)\n"
	"{\n"
	"	(void)b; (void)c; (void)d; (void)src; (void)comm;\n"
	"	*r = (MPI_Request)(void *)reqs[tag & 3];\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Irsend(const void *b, int c, MPI_Datatype d, int dst, int tag,\n"
	"		MPI_Comm comm, MPI_Request *r)\n"
	"{\n"
	"	if (dst == 7)\n"
	"		printf(\"irsend %p %d %p %d %d %p\\n\", b, c, (void *)d, dst,\n"
	"		       tag, (void *)comm);\n"
	"	*r = (MPI_Request)(void *)reqs[tag & 3];\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Test(MPI_Request *r, int *flag, MPI_Status *st)\n"
	"{\n"
	"	(void)r; (void)st;\n"
	"	*flag = 7;\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Allreduce(const void *sb, void *rb, int c, MPI_Datatype d,\n"
	"		   MPI_Op op, MPI_Comm comm)\n"
	"{\n"
	"	(void)sb; (void)rb; (void)c; (void)d; (void)op; (void)comm;\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Barrier(MPI_Comm comm)\n"
	"{\n"
	"	(void)comm;\n"
	"	return 0;\n"
	"}\n"
	"int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag,\n"
	"		MPI_Status *st)\n"
	"{\n"
	"	(void)comm; (void)st;\n"
	"	*flag = src + tag;\n"
	"	return 0;\n"
	"}\n";

/* Thread "a" posts through the shared request variable with tag 1 and
 * then thread "b" posts through it with tag 5; thread b took its first
 * record, through a variable of its own, before thread a (tag 2). */
static const char prog_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <pthread.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*isend_t)(const void *, int, MPI_Datatype, int, int,\n"
	"		       MPI_Comm, MPI_Request *);\n"
	"static isend_t isend, irecv;\n"
	"static int one = 1;\n"
	"static MPI_Request shared, own;\n"
	"static void post(int tag, MPI_Request *r)\n"
	"{\n"
	"	irecv(&one, 1, (MPI_Datatype)0, 3, tag, (MPI_Comm)0, r);\n"
	"}\n"
	"static void *b_first(void *x) { (void)x; post(2, &own); return NULL; }\n"
	"static void *a(void *x) { (void)x; post(1, &shared); return NULL; }\n"
	"static void *b_then(void *x) { (void)x; post(5, &shared); return NULL; }\n"
	"int main(void)\n"
	"{\n"
	"	struct mdt_table *t;\n"
	"	MPI_Request r;\n"
	"	pthread_t th;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	isend = (isend_t)dlsym(RTLD_DEFAULT, \"MPI_Isend\");\n"
	"	irecv = (isend_t)dlsym(RTLD_DEFAULT, \"MPI_Irecv\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	if (!isend || !irecv || !t)\n"
	"		return 3;\n"
	"	isend((void *)0x1111, 2222, (MPI_Datatype)(void *)0x3333, 4444,\n"
	"	      8, (MPI_Comm)(void *)0x5555, &r);\n"
	"	pthread_create(&th, NULL, b_first, NULL);\n"
	"	pthread_join(th, NULL);\n"
	"	pthread_create(&th, NULL, a, NULL);\n"
	"	pthread_join(th, NULL);\n"
	"	pthread_create(&th, NULL, b_then, NULL);\n"
	"	pthread_join(th, NULL);\n"
	"	for (unsigned i = 0; i < MDT_NBUCKETS; i++)\n"
	"		for (int w = 0; w < MDT_WAYS; w++) {\n"
	"			struct mdt_post *p = &t->posts[i][w];\n"
	"			if (p->site)\n"
	"				printf(\"post call %%d peer %%d tag %%d comm %%#llx ok %%d%%s\\n\",\n"
	"				       MDT_SITE_CALL(p->site), p->peer, p->tag,\n"
	"				       (unsigned long long)p->comm,\n"
	"				       mdt_post_valid(p, i, t->handle_size),\n"
	"				       p->loc == (uintptr_t)&shared ? \" shared\" :\n"
	"				       p->loc == (uintptr_t)&own ? \" own\" :\n"
	"				       p->loc == (uintptr_t)&r ? \" r\" :\n"
	"				       p->site & MDT_SITE_HELD ? \" held\" : \"\");\n"
	"		}\n"
	"	return 0;\n"
	"}\n";

/* Two request variables of one bucket posted through in turns, then a
 * third: what the table counts as dropped. */
static const char turns_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*irecv_t)(void *, int, MPI_Datatype, int, int,\n"
	"		       MPI_Comm, MPI_Request *);\n"
	"static MPI_Request pool[1 << 19];\n"
	"int main(void)\n"
	"{\n"
	"	MPI_Request *v[3] = { pool, 0, 0 };\n"
	"	int k = 1, order[] = { 0, 1, 0, 1, 0, 1, 0 }, one = 1;\n"
	"	struct mdt_table *t;\n"
	"	irecv_t irecv;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	irecv = (irecv_t)dlsym(RTLD_DEFAULT, \"MPI_Irecv\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	for (MPI_Request *p = pool + 1; k < 3 && p < pool + (1 << 19); p++)\n"
	"		if (mdt_var_bucket((uintptr_t)p, sizeof(*p)) ==\n"
	"		    mdt_var_bucket((uintptr_t)pool, sizeof(*p)))\n"
	"			v[k++] = p;\n"
	"	if (!irecv || !t || k < 3)\n"
	"		return 3;\n"
	"	for (int i = 0; i < 7; i++)\n"
	"		irecv(&one, 1, (MPI_Datatype)0, 0, i, (MPI_Comm)0, v[order[i]]);\n"
	"	printf(\"turns dropped %%llu\\n\", (unsigned long long)t->posts_dropped);\n"
	"	irecv(&one, 1, (MPI_Datatype)0, 0, 9, (MPI_Comm)0, v[2]);\n"
	"	printf(\"third dropped %%llu\\n\", (unsigned long long)t->posts_dropped);\n"
	"	for (int w = 0; w < MDT_WAYS; w++) {\n"
	"		struct mdt_post *p = &t->posts[mdt_var_bucket((uintptr_t)pool, sizeof(*pool))][w];\n"
	"		printf(\"way %%d variable %%d tag %%d\\n\", w,\n"
	"		       p->loc == (uintptr_t)v[0] ? 0 :\n"
	"		       p->loc == (uintptr_t)v[1] ? 1 : 2, p->tag);\n"
	"	}\n"
	"	return 0;\n"
	"}\n";

/* A loop over an array of requests, each completed (MPI_REQUEST_NULL,
 * 0 here: no libmpi) before its next post, through MPI_Irecv and
 * MPI_Irsend, with arguments that change every round but the last: each
 * variable's record is the last post's, all its own bucket. */
static const char loop_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*p2p_t)(const void *, int, MPI_Datatype, int, int,\n"
	"		     MPI_Comm, MPI_Request *);\n"
	"static MPI_Request v[8];\n"
	"int main(void)\n"
	"{\n"
	"	struct mdt_table *t;\n"
	"	p2p_t irecv, irsend;\n"
	"	int one = 1;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	irecv = (p2p_t)dlsym(RTLD_DEFAULT, \"MPI_Irecv\");\n"
	"	irsend = (p2p_t)dlsym(RTLD_DEFAULT, \"MPI_Irsend\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	if (!irecv || !irsend || !t)\n"
	"		return 3;\n"
	"	for (int round = 0; round < 4; round++)\n"
	"		for (int k = 0; k < 8; k++) {\n"
	"			int r = round < 3 ? round : 2;\n"
	"			(k & 1 ? irsend : irecv)(&one, 1 + r,\n"
	"				(MPI_Datatype)(uintptr_t)0x77, k, 10 * r + k,\n"
	"				(MPI_Comm)(uintptr_t)(0x100 + r), &v[k]);\n"
	"			v[k] = 0;\n"
	"		}\n"
	"	for (int k = 0; k < 8; k++) {\n"
	"		unsigned i = mdt_var_bucket((uintptr_t)&v[k], sizeof(v[k]));\n"
	"		struct mdt_post *p = &t->posts[i][0];\n"
	"		uint64_t ret = MDT_SITE_RET(p->site);\n"
	"		printf(\"v%%d ok %%d own %%d call %%d peer %%d tag %%d comm %%#llx\"\n"
	"		       \" in main %%d second %%d\\n\", k, mdt_post_valid(p, i, t->handle_size),\n"
	"		       p->loc == (uintptr_t)&v[k], MDT_SITE_CALL(p->site),\n"
	"		       p->peer, p->tag, (unsigned long long)p->comm,\n"
	"		       ret > (uintptr_t)main && ret < (uintptr_t)main + 4096,\n"
	"		       t->posts[i][1].site != 0);\n"
	"	}\n"
	"	printf(\"dropped %%llu\\n\", (unsigned long long)t->posts_dropped);\n"
	"	return 0;\n"
	"}\n";

/* One variable posted through by the same call at the same place with
 * the same arguments while it holds a request (copied out, as into a C++
 * vector), then with another tag: held records, and the variable's. */
static const char same_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*p2p_t)(const void *, int, MPI_Datatype, int, int,\n"
	"		     MPI_Comm, MPI_Request *);\n"
	"static MPI_Request r, out[4];\n"
	"static int held(struct mdt_table *t)\n"
	"{\n"
	"	int n = 0;\n"
	"	for (unsigned i = 0; i < MDT_NBUCKETS; i++)\n"
	"		for (int w = 0; w < MDT_WAYS; w++)\n"
	"			n += (t->posts[i][w].site & MDT_SITE_HELD) != 0;\n"
	"	return n;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	struct mdt_table *t;\n"
	"	p2p_t irecv;\n"
	"	int one = 1;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	irecv = (p2p_t)dlsym(RTLD_DEFAULT, \"MPI_Irecv\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	if (!irecv || !t)\n"
	"		return 3;\n"
	"	for (int k = 0; k < 4; k++) {\n"
	"		irecv(&one, 1, (MPI_Datatype)0, 3, k < 3 ? 6 : 7,\n"
	"		      (MPI_Comm)(uintptr_t)0x100, &r);\n"
	"		out[k] = r;\n"
	"		printf(\"post %%d held %%d\\n\", k, held(t));\n"
	"	}\n"
	"	unsigned i = mdt_var_bucket((uintptr_t)&r, sizeof(r));\n"
	"	struct mdt_post *p = &t->posts[i][0];\n"
	"	printf(\"r ok %%d own %%d tag %%d\\n\", mdt_post_valid(p, i, t->handle_size),\n"
	"	       p->loc == (uintptr_t)&r, p->tag);\n"
	"	return 0;\n"
	"}\n";

/* Polling calls through the wrappers: their count and the last one's
 * call and return address (here, in main). */
static const char polls_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*test_t)(MPI_Request *, int *, MPI_Status *);\n"
	"typedef int (*iprobe_t)(int, int, MPI_Comm, int *, MPI_Status *);\n"
	"int main(void)\n"
	"{\n"
	"	struct mdt_table *t;\n"
	"	MPI_Request r = 0;\n"
	"	int flag = 0, sum = 0;\n"
	"	test_t test;\n"
	"	iprobe_t iprobe;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	test = (test_t)dlsym(RTLD_DEFAULT, \"MPI_Test\");\n"
	"	iprobe = (iprobe_t)dlsym(RTLD_DEFAULT, \"MPI_Iprobe\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	if (!test || !iprobe || !t)\n"
	"		return 3;\n"
	"	for (int i = 0; i < 5; i++) {\n"
	"		test(&r, &flag, NULL);\n"
	"		sum += flag;\n"
	"	}\n"
	"	iprobe(3, 4, (MPI_Comm)0, &flag, NULL);\n"
	"	uint64_t ret = MDT_SITE_RET(t->poll_site);\n"
	"	printf(\"polls %%llu call %%d in main %%d flags %%d %%d\\n\",\n"
	"	       (unsigned long long)t->polls, MDT_SITE_CALL(t->poll_site),\n"
	"	       ret > (uintptr_t)main && ret < (uintptr_t)main + 4096,\n"
	"	       sum, flag);\n"
	"	return 0;\n"
	"}\n";

/* Three MPI_Allreduce on one communicator, an MPI_Barrier on another,
 * an MPI_Allreduce on the first: the tickets and the slots. */
static const char colls_fmt[] =
	"#include <mpi.h>\n"
	"#include <dlfcn.h>\n"
	"#include <stdio.h>\n"
	"#include <stdint.h>\n"
	"#include \"%s/include/mdtrack.h\"\n"
	"typedef int (*allreduce_t)(const void *, void *, int, MPI_Datatype,\n"
	"			   MPI_Op, MPI_Comm);\n"
	"typedef int (*barrier_t)(MPI_Comm);\n"
	"static struct mdt_coll *slot(struct mdt_table *t, uint64_t comm)\n"
	"{\n"
	"	for (int i = 0; i < MDT_NCOLLS; i++)\n"
	"		if (t->colls[i].comm == comm)\n"
	"			return &t->colls[i];\n"
	"	return NULL;\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	struct mdt_table *t;\n"
	"	struct mdt_coll *a, *b;\n"
	"	allreduce_t allreduce;\n"
	"	barrier_t barrier;\n"
	"	int x = 1, y;\n"
	"	if (!dlopen(\"%s\", RTLD_NOW | RTLD_GLOBAL))\n"
	"		return 2;\n"
	"	allreduce = (allreduce_t)dlsym(RTLD_DEFAULT, \"MPI_Allreduce\");\n"
	"	barrier = (barrier_t)dlsym(RTLD_DEFAULT, \"MPI_Barrier\");\n"
	"	t = dlsym(RTLD_DEFAULT, \"md_track_table\");\n"
	"	if (!allreduce || !barrier || !t)\n"
	"		return 3;\n"
	"	for (int k = 0; k < 3; k++)\n"
	"		allreduce(&x, &y, 1, (MPI_Datatype)0, (MPI_Op)0,\n"
	"			  (MPI_Comm)(uintptr_t)0xa00);\n"
	"	printf(\"loop head %%llu\\n\", (unsigned long long)t->colls_head);\n"
	"	barrier((MPI_Comm)(uintptr_t)0xb00);\n"
	"	allreduce(&x, &y, 2, (MPI_Datatype)0, (MPI_Op)0,\n"
	"		  (MPI_Comm)(uintptr_t)0xa00);\n"
	"	a = slot(t, 0xa00);\n"
	"	b = slot(t, 0xb00);\n"
	"	if (!a || !b)\n"
	"		return 4;\n"
	"	printf(\"head %%llu a %%llu %%llu count %%d b %%llu %%llu\\n\",\n"
	"	       (unsigned long long)t->colls_head,\n"
	"	       (unsigned long long)a->stamp, (unsigned long long)a->ncalls,\n"
	"	       a->count, (unsigned long long)b->stamp,\n"
	"	       (unsigned long long)b->ncalls);\n"
	"	return 0;\n"
	"}\n";

/* Builds the fake MPI and the program of fmt (given the source tree and
 * the fake) and returns what the program printed with the library
 * preloaded; skips where the library or Open MPI's mpicc is missing. */
static char *run_with_library(const char *fmt)
{
	const char *build = getenv("MD_BUILD") ? getenv("MD_BUILD") : "build";
	char *lib = xasprintf("%s/lib/mpi-deadlock/libmdtrack.so", build);
	char *mpiflags, *dir, *fake, *src, *prog, *out, *flags, *abslib;
	char cwd[4096];

	if (access(lib, R_OK))
		cr_skip_test("%s not built (no mpicc when it was built)", lib);
	mpiflags = ef_output("mpicc --showme:compile 2>/dev/null");
	if (!mpiflags)
		cr_skip_test("libmdtrack.so is built against Open MPI's "
			     "mpi.h; no Open MPI mpicc here");
	mpiflags[strcspn(mpiflags, "\n")] = '\0';
	/* The source tree: here (make), or above the build folder. */
	if (access("include/mdtrack.h", R_OK) == 0)
		cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	else
		snprintf(cwd, sizeof(cwd), "%s/..", build);
	abslib = realpath(lib, NULL);
	cr_assert_not_null(abslib);
	dir = ef_tmpdir();
	flags = xasprintf("%s -O2 -fPIC -shared", mpiflags);
	fake = ef_cc(dir, "libfake.so", fake_src, flags, NULL);
	cr_assert_not_null(fake);
	free(flags);
	/* fmt is one of this file's program texts. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	src = xasprintf(fmt, cwd, fake);
#pragma GCC diagnostic pop
	flags = xasprintf("%s -O2 -pthread", mpiflags);
	prog = ef_cc(dir, "prog", src, flags, "-ldl");
	cr_assert_not_null(prog);
	out = ef_output("LD_PRELOAD=%s %s", abslib, prog);
	cr_assert_not_null(out, "the program failed");
	free(prog);
	free(src);
	free(flags);
	free(fake);
	free(mpiflags);
	free(abslib);
	ef_rmtree(dir);
	free(lib);
	return out;
}

Test(mdtrack, wrappers_find_a_late_mpi_and_keep_the_newest_post_per_variable)
{
	char *out = run_with_library(prog_fmt);

	/* Every argument reached the late-found PMPI_Isend intact (the
	 * seventh on the stack, passed on by the tail call). */
	cr_expect(strstr(out, "isend 0x1111 2222 0x3333 4444 8 0x5555\n"),
		  "%s", out);
	/* The Isend's record, with its communicator and variable. */
	cr_expect(strstr(out, "post call 1 peer 4444 tag 8 comm 0x5555 ok 1 r\n"),
		  "%s", out);
	/* shared: posted through by a with tag 1, then by b with tag 5;
	 * a's request was still in it, so a's post is kept as held (by the
	 * handle, in the handle's bucket). */
	cr_expect(strstr(out, " tag 5 comm 0 ok 1 shared\n"), "%s", out);
	cr_expect(strstr(out, " tag 1 comm 0 ok 1 held\n"), "%s", out);
	cr_expect(strstr(out, " tag 2 comm 0 ok 1 own\n"), "%s", out);
	free(out);
}

Test(mdtrack, two_variables_of_a_bucket_in_turns_lose_nothing_a_third_drops_one)
{
	char *out = run_with_library(turns_fmt);

	/* Variables 0 and 1 swap ways at every post: neither loses a
	 * record. */
	cr_expect(strstr(out, "turns dropped 0\n"), "%s", out);
	/* Variable 2 comes first and pushes out the older of the two. */
	cr_expect(strstr(out, "third dropped 1\n"), "%s", out);
	cr_expect(strstr(out, "way 0 variable 2 tag 9\n"), "%s", out);
	cr_expect(strstr(out, "way 1 variable 0 tag 6\n"), "%s", out);
	free(out);
}

Test(mdtrack, loop_over_a_request_array_keeps_each_variables_last_post)
{
	char *out = run_with_library(loop_fmt);

	/* Every argument reached PMPI_Irsend intact (the last round). */
	cr_expect(strstr(out, " 3 0x77 7 27 0x102\n"), "%s", out);
	for (int k = 0; k < 8; k++) {
		char *want = xasprintf(
			"v%d ok 1 own 1 call %d peer %d tag %d comm 0x102 in "
			"main 1 second 0\n",
			k, k & 1 ? MDT_MPI_Irsend : MDT_MPI_Irecv, k, 20 + k);

		cr_expect(strstr(out, want), "%s (want %s)", out, want);
		free(want);
	}
	cr_expect(strstr(out, "dropped 0\n"), "%s", out);
	free(out);
}

Test(mdtrack, polling_calls_are_counted_with_the_last_site)
{
	char *out = run_with_library(polls_fmt);
	char *want = xasprintf("polls 6 call %d in main 1 flags 35 7\n",
			       MDT_MPI_Iprobe);

	/* Five tests and a probe, each answered by the fake PMPI. */
	cr_expect(strstr(out, want), "%s (want %s)", out, want);
	free(want);
	free(out);
}

/* The same post again through a variable that holds a request writes
 * nothing, not even a held record (the collector finds the copied-out
 * request's posting by its arguments: collector/track.c orphan_post);
 * another tag keeps the variable's record as held. */
Test(mdtrack, same_post_through_a_variable_holding_a_request_writes_nothing)
{
	char *out = run_with_library(same_fmt);

	cr_expect(strstr(out, "post 0 held 0\npost 1 held 0\npost 2 held 0\n"
			      "post 3 held 1\n"),
		  "%s", out);
	cr_expect(strstr(out, "r ok 1 own 1 tag 7\n"), "%s", out);
	free(out);
}

/* A loop of collectives on one communicator takes one ticket (it writes
 * only its slot); another communicator's collective takes the next, and
 * the first's after it the next again: the stamps still say which
 * communicator's collective came last. */
Test(mdtrack, collectives_take_a_ticket_when_their_communicator_changes)
{
	char *out = run_with_library(colls_fmt);

	cr_expect(strstr(out, "loop head 1\n"), "%s", out);
	cr_expect(strstr(out, "head 3 a 4 4 count 2 b 3 1\n"), "%s", out);
	free(out);
}
