/*
 * elfsym_test.c - symbols of real ELF files compiled here, process views
 * from real and fake /proc/PID/maps texts.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/elfsym.h"
#include "../collector/elfsym_int.h"
#include "md.h"
#include "support/elf_fixture.h"
#include "support/mpijob.h"

/* A library and a PIE program that both define shared_var: the program
 * refers to the library's variable, so the linker copy-relocates it into
 * the program (as ompi_mpi_comm_world lives in an MPI program). */
static const char lib_src[] =
	"int shared_var = 5;\n"
	"__attribute__((noinline)) static int lib_local(int x) { return x * 3; }\n"
	"int lib_func(int x) { return lib_local(x) + shared_var; }\n"
	"int lib_only = 7;\n";

static const char prog_src[] =
	"#include <stdio.h>\n"
	"extern int shared_var;\n"
	"extern int lib_only;\n"
	"int lib_func(int);\n"
	"int prog_func(int x) { return x + 1; }\n"
	"int main(void)\n"
	"{\n"
	"	FILE *m = fopen(\"/proc/self/maps\", \"r\");\n"
	"	int c;\n"
	"	printf(\"shared_var %p\\nlib_only %p\\nlib_func %p\\n\"\n"
	"	       \"prog_func %p\\n--\\n\", (void *)&shared_var,\n"
	"	       (void *)&lib_only, (void *)lib_func, (void *)prog_func);\n"
	"	while ((c = fgetc(m)) != EOF)\n"
	"		putchar(c);\n"
	"	return lib_func(0) == 5 ? 0 : 1;\n"
	"}\n";

struct pair {
	char *dir, *lib, *prog;
};

static struct pair build_pair(void)
{
	struct pair p;
	char *flags;

	p.dir = ef_tmpdir();
	p.lib = ef_cc(p.dir, "libpair.so", lib_src, "-g -O1 -shared -fPIC",
		      NULL);
	cr_assert_not_null(p.lib, "cc could not build the test library");
	flags = xasprintf("-g -O1 -fPIE -pie -L%s -Wl,-rpath,%s", p.dir,
			  p.dir);
	p.prog = ef_cc(p.dir, "prog", prog_src, flags, "-lpair");
	free(flags);
	cr_assert_not_null(p.prog, "cc could not build the test program");
	return p;
}

static void free_pair(struct pair *p)
{
	free(p->lib);
	free(p->prog);
	ef_rmtree(p->dir);
}

/* The address the program printed for name, from its output. */
static uint64_t printed(const char *out, const char *name)
{
	const char *l = strstr(out, name);
	unsigned long long v = 0;

	cr_assert_not_null(l, "program did not print %s", name);
	cr_assert_eq(sscanf(l + strlen(name), " %llx", &v), 1);
	return v;
}

Test(elfsym, finds_defined_functions_and_objects_by_name)
{
	struct pair p = build_pair();
	struct es_image *img;
	uint64_t v, size;
	enum es_kind kind;

	cr_assert_eq(es_image_open(p.lib, &img), 0);
	cr_assert_eq(es_lookup_full(img, "lib_func", &v, &size, &kind), 0);
	cr_expect_eq(kind, ES_FUNC);
	cr_expect_gt(size, 0);
	cr_assert_eq(es_lookup_full(img, "shared_var", &v, &size, &kind), 0);
	cr_expect_eq(kind, ES_OBJECT);
	cr_expect_eq(size, sizeof(int));
	/* From .symtab only: a static function. */
	cr_expect_eq(es_lookup(img, "lib_local", NULL), 0);
	cr_expect_eq(es_lookup(img, "no_such_symbol", &v), -MD_E_NOSYM);
	es_image_free(img);
	free_pair(&p);
}

Test(elfsym, undefined_symbols_are_not_indexed)
{
	struct pair p = build_pair();
	struct es_image *img;

	cr_assert_eq(es_image_open(p.prog, &img), 0);
	/* prog calls lib_func and printf but does not define them. */
	cr_expect_eq(es_lookup(img, "lib_func", NULL), -MD_E_NOSYM);
	cr_expect_eq(es_lookup(img, "printf", NULL), -MD_E_NOSYM);
	cr_expect_eq(es_lookup(img, "prog_func", NULL), 0);
	es_image_free(img);
	free_pair(&p);
}

/* The .eh_frame_hdr of path as readelf and od see it: vaddr and the
 * FDE count (after a 4-byte eh_frame_ptr, as gcc writes it). */
static void eh_frame_hdr_of(const char *path, uint64_t *vaddr,
			    uint64_t *count)
{
	unsigned long long v = 0, n = 0;
	char *out = ef_output(
		"f='%s'; set -- $(readelf -lW \"$f\" | awk '/GNU_EH_FRAME/ "
		"{ print $2, $3 }'); echo $2 $(od -An -tu4 -j $(($1 + 8)) "
		"-N4 \"$f\")", path);

	cr_assert_not_null(out);
	cr_assert_eq(sscanf(out, "%llx %llu", &v, &n), 2, "got %s", out);
	*vaddr = v;
	*count = n;
	free(out);
}

Test(elfsym, eh_frame_hdr_table_is_where_readelf_puts_it)
{
	struct pair p = build_pair();
	struct es_image *img;
	struct es_eh_table eh;
	uint64_t vaddr, count;

	eh_frame_hdr_of(p.lib, &vaddr, &count);
	cr_assert_eq(es_image_open(p.lib, &img), 0);
	cr_assert_eq(es_image_eh_table(img, &eh), 0);
	cr_expect_eq(eh.hdr, vaddr, "hdr %#llx, readelf %#llx",
		     (unsigned long long)eh.hdr, (unsigned long long)vaddr);
	cr_expect_eq(eh.table, vaddr + 12);
	cr_expect_eq(eh.count, count);
	cr_expect_gt(eh.count, 0);
	es_image_free(img);
	free_pair(&p);
}

Test(elfsym, image_linked_without_eh_frame_hdr_has_no_table)
{
	char *dir = ef_tmpdir();
	char *lib = ef_cc(dir, "libnohdr.so", lib_src,
			  "-O1 -shared -fPIC -Wl,--no-eh-frame-hdr", NULL);
	struct es_image *img;
	struct es_eh_table eh;

	cr_assert_not_null(lib);
	cr_assert_eq(es_image_open(lib, &img), 0);
	cr_expect_eq(es_image_eh_table(img, &eh), -MD_E_NOSYM);
	es_image_free(img);
	free(lib);
	ef_rmtree(dir);
}

Test(elfsym, addr_to_name_gives_function_and_offset_inside_it)
{
	struct pair p = build_pair();
	struct es_image *img;
	const char *name;
	uint64_t v, size, off;

	cr_assert_eq(es_image_open(p.lib, &img), 0);
	cr_assert_eq(es_lookup_full(img, "lib_func", &v, &size, NULL), 0);
	cr_assert_eq(es_addr_to_name(img, v, &name, &off), 0);
	cr_expect_str_eq(name, "lib_func");
	cr_expect_eq(off, 0);
	cr_assert_eq(es_addr_to_name(img, v + size - 1, &name, &off), 0);
	cr_expect_str_eq(name, "lib_func");
	cr_expect_eq(off, size - 1);
	cr_expect_eq(es_addr_to_name(img, 0, &name, NULL), -MD_E_NOSYM);
	es_image_free(img);
	free_pair(&p);
}

Test(elfsym, proc_lookup_matches_addresses_of_the_running_program)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v;
	char *out = ef_output("'%s'", p.prog);
	const char *maps;
	uint64_t a;

	cr_assert_not_null(out, "test program failed");
	maps = strstr(out, "--\n") + 3;
	cr_assert_eq(es_view_from_maps(c, maps, p.prog, &v), 0);
	cr_assert_geq(es_view_count(v), 3, "prog, libpair, libc at least");
	cr_expect_str_eq(es_view_object(v, 0)->path, p.prog);
	/* prog's first DT_NEEDED comes next, whatever its address. */
	cr_expect_str_eq(es_view_object(v, 1)->path, p.lib);

	cr_assert_eq(es_proc_lookup(v, "prog_func", &a), 0);
	cr_expect_eq(a, printed(out, "prog_func"));
	cr_assert_eq(es_proc_lookup(v, "lib_func", &a), 0);
	cr_expect_eq(a, printed(out, "lib_func"));
	cr_assert_eq(es_proc_lookup(v, "lib_only", &a), 0);
	cr_expect_eq(a, printed(out, "lib_only"));
	es_view_free(v);
	es_cache_free(c);
	free(out);
	free_pair(&p);
}

Test(elfsym, copy_relocated_symbol_resolves_to_the_executable_first)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v;
	const struct es_object *obj;
	struct es_image *lib;
	char *out = ef_output("'%s'", p.prog);
	uint64_t a, in_lib;

	cr_assert_not_null(out, "test program failed");
	cr_assert_eq(es_view_from_maps(c, strstr(out, "--\n") + 3, p.prog, &v),
		     0);
	/* Both files define it: the library's copy is not the live one. */
	cr_assert_eq(es_cache_get(c, p.lib, &lib), 0);
	cr_assert_eq(es_lookup(lib, "shared_var", &in_lib), 0);
	cr_assert_eq(es_proc_lookup_obj(v, "shared_var", &a, &obj), 0);
	cr_expect_str_eq(obj->path, p.prog);
	cr_expect_eq(a, printed(out, "shared_var"));
	es_view_free(v);
	es_cache_free(c);
	free(out);
	free_pair(&p);
}

Test(elfsym, proc_lookup_accepts_null_out_pointer)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v = es_view_new(c);

	cr_assert_eq(es_view_add(v, p.prog, 0x555555554000ULL), 0);
	cr_assert_eq(es_view_add(v, p.lib, 0x7f0000000000ULL), 0);
	cr_expect_eq(es_proc_lookup(v, "MPIR_Ignore_queues", NULL),
		     -MD_E_NOSYM);
	cr_expect_eq(es_proc_lookup(v, "lib_func", NULL), 0);
	es_view_free(v);
	es_cache_free(c);
	free_pair(&p);
}

/* Objects added in any address order are found by address, between
 * and around them nothing is; overlapping objects give the first added
 * (the view's order), as a plain scan does. */
Test(elfsym, object_at_finds_objects_added_in_any_order)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v = es_view_new(c);
	static const uint64_t bias[] = { 0x7f3000000000ULL, 0x555555554000ULL,
					 0x7f1000000000ULL, 0x7f2000000000ULL };
	const struct es_object *o;

	for (int i = 0; i < 4; i++)
		cr_assert_eq(es_view_add(v, i % 2 ? p.prog : p.lib, bias[i]), 0);
	for (unsigned i = 0; i < 4; i++) {
		o = es_view_object(v, i);
		cr_expect_eq(es_proc_object_at(v, o->start), o, "object %u", i);
		cr_expect_eq(es_proc_object_at(v, o->end - 1), o, "object %u", i);
		cr_expect_null(es_proc_object_at(v, o->end), "after object %u", i);
		cr_expect_null(es_proc_object_at(v, o->start - 1),
			       "before object %u", i);
	}
	cr_expect_null(es_proc_object_at(v, 0));
	cr_expect_null(es_proc_object_at(v, UINT64_MAX));
	/* The library again, over the first one: the first still answers. */
	o = es_view_object(v, 0);
	cr_assert_eq(es_view_add(v, p.lib, bias[0] + 8), 0);
	cr_expect_eq(es_proc_object_at(v, o->start + 8), o);
	cr_expect_eq(es_proc_object_at(v, o->end + 4), es_view_object(v, 4));
	es_view_free(v);
	es_cache_free(c);
	free_pair(&p);
}

Test(elfsym, bias_from_fake_maps_is_lowest_offset_zero_mapping)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v;
	struct es_image *lib;
	uint64_t val, a;
	char *maps = xasprintf(
		"7f1000002000-7f1000003000 r-xp 00001000 08:01 42 %s\n"
		"7f1000000000-7f1000001000 r--p 00000000 08:01 42 %s\n"
		"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0 [stack]\n"
		"7f2000000000-7f2000001000 r--p 00000000 08:01 43 "
		"/nonexistent/libgone.so\n",
		p.lib, p.lib);

	cr_assert_eq(es_view_from_maps(c, maps, NULL, &v), 0);
	cr_assert_eq(es_view_count(v), 1, "only the library is a real ELF");
	cr_expect_eq(es_view_object(v, 0)->bias, 0x7f1000000000ULL);
	cr_assert_eq(es_cache_get(c, p.lib, &lib), 0);
	cr_assert_eq(es_lookup(lib, "lib_func", &val), 0);
	cr_assert_eq(es_proc_lookup(v, "lib_func", &a), 0);
	cr_expect_eq(a, val + 0x7f1000000000ULL);
	cr_expect_eq(es_proc_object_at(v, a), es_view_object(v, 0));
	cr_expect_null(es_proc_object_at(v, 0x1000));
	es_view_free(v);
	es_cache_free(c);
	free(maps);
	free_pair(&p);
}

Test(elfsym, malformed_maps_text_is_rejected)
{
	struct es_cache *c = es_cache_new();
	struct es_view *v = (struct es_view *)1;

	static const char *const bad[] = {
		"this is not maps\n",
		/* '@' and '`' sit next to the hex letters: not digits */
		"0040000@-00401000 r-xp 00000000 08:01 42 /bin/true\n",
		"00400000-0040100` r-xp 00000000 08:01 42 /bin/true\n",
		"-0400000-00401000 r-xp 00000000 08:01 42 /bin/true\n",
		"00400000-00401000 r-xp 00000000 08:01 +42 /bin/true\n",
		/* 17 hex digits do not fit */
		"100000000000000000-00401000 r-xp 00000000 08:01 42 /bin/true\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = (struct es_view *)1;
		cr_expect_eq(es_view_from_maps(c, bad[i], NULL, &v), -MD_E_INPUT,
			     "%s", bad[i]);
		cr_expect_null(v, "%s", bad[i]);
	}
	es_cache_free(c);
}

Test(elfsym, maps_line_cut_short_is_rejected_not_joined_to_the_next)
{
	struct es_cache *c = es_cache_new();
	struct es_view *v = (struct es_view *)1;

	/* Without its inode the line must not borrow the next line's. */
	cr_expect_eq(es_view_from_maps(c, "00400000-00401000 r-xp 00000000 "
				       "08:01 \n42 /bin/true\n", NULL, &v),
		     -MD_E_INPUT);
	cr_expect_null(v);
	es_cache_free(c);
}

Test(elfsym, cache_opens_a_file_once_for_many_views)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_image *a, *b;
	char *link = xasprintf("%s/alias.so", p.dir);
	int i;

	cr_assert_eq(ef_sh("ln -s '%s' '%s'", p.lib, link), 0);
	for (i = 0; i < 64; i++) {
		struct es_view *v = es_view_new(c);

		cr_assert_eq(es_view_add(v, i % 2 ? link : p.lib, 0), 0);
		es_view_free(v);
	}
	cr_assert_eq(es_cache_get(c, p.lib, &a), 0);
	cr_assert_eq(es_cache_get(c, link, &b), 0);
	cr_expect_eq(a, b);
	cr_expect_eq(es_cache_count(c), 1);
	es_cache_free(c);
	free(link);
	free_pair(&p);
}

Test(elfsym, cache_reopens_a_file_replaced_on_disk)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_image *a, *b;

	cr_assert_eq(es_cache_get(c, p.lib, &a), 0);
	cr_assert_eq(ef_sh("cp '%s' '%s.new' && mv '%s.new' '%s'", p.prog,
			   p.lib, p.lib, p.lib), 0);
	cr_assert_eq(es_cache_get(c, p.lib, &b), 0);
	cr_expect_neq(a, b);
	cr_expect_eq(es_lookup(b, "prog_func", NULL), 0);
	cr_expect_eq(es_cache_count(c), 2);
	es_cache_free(c);
	free_pair(&p);
}

Test(elfsym, opening_a_non_elf_file_fails_with_input_error)
{
	char *dir = ef_tmpdir();
	char *path = ef_write(dir, "text", "not an ELF file\n");
	struct es_image *img = (struct es_image *)1;

	cr_expect_eq(es_image_open(path, &img), -MD_E_INPUT);
	cr_expect_null(img);
	free(path);
	ef_rmtree(dir);
}

Test(elfsym, dlopened_object_comes_after_needed_libraries)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v;
	const struct es_object *obj;
	char *plug = ef_cc(p.dir, "libplug.so", "int lib_func(int x) "
			   "{ return x; }\n", "-g -shared -fPIC", NULL);
	char *maps;
	uint64_t a;

	cr_assert_not_null(plug);
	/* The plugin sits above the library, as dlopen()ed objects often
	 * do; it must still come after it in search order. */
	maps = xasprintf(
		"555555554000-555555555000 r--p 00000000 08:01 41 %s\n"
		"7f1000000000-7f1000001000 r--p 00000000 08:01 42 %s\n"
		"7f2000000000-7f2000001000 r--p 00000000 08:01 43 %s\n",
		p.prog, p.lib, plug);
	cr_assert_eq(es_view_from_maps(c, maps, p.prog, &v), 0);
	cr_assert_eq(es_view_count(v), 3);
	cr_expect_str_eq(es_view_object(v, 1)->path, p.lib);
	cr_expect_str_eq(es_view_object(v, 2)->path, plug);
	cr_assert_eq(es_proc_lookup_obj(v, "lib_func", &a, &obj), 0);
	cr_expect_str_eq(obj->path, p.lib);
	es_view_free(v);
	es_cache_free(c);
	free(maps);
	free(plug);
	free_pair(&p);
}

/* A real Open MPI rank prints where its MPI symbols are and its maps;
 * the view built from those maps must agree. */
static const char rank_src[] =
	"#include <mpi.h>\n"
	"#include <stdio.h>\n"
	"extern char MPIR_dll_name[];\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	FILE *m;\n"
	"	int c;\n"
	"	MPI_Init(&argc, &argv);\n"
	"	printf(\"ompi_mpi_comm_world %p\\nMPIR_dll_name %p\\n--\\n\",\n"
	"	       (void *)MPI_COMM_WORLD, (void *)MPIR_dll_name);\n"
	"	m = fopen(\"/proc/self/maps\", \"r\");\n"
	"	while ((c = fgetc(m)) != EOF)\n"
	"		putchar(c);\n"
	"	MPI_Finalize();\n"
	"	return 0;\n"
	"}\n";

Test(e2e_elfsym, open_mpi_rank_symbols_resolve_to_their_live_addresses)
{
	char *dir, *prog, *out, *exe;
	struct es_cache *c;
	struct es_view *v;
	const struct es_object *o;
	struct mj_job *j;
	uint64_t a;
	int rc;

	if (ef_sh("command -v mpicc >/dev/null && command -v mpirun "
		  ">/dev/null") != 0)
		cr_skip_test("mpicc/mpirun not installed");
	dir = ef_tmpdir();
	prog = xasprintf("%s/rank", dir);
	free(ef_write(dir, "rank.c", rank_src));
	cr_assert_eq(ef_sh("mpicc -g -o '%s' '%s/rank.c'", prog, dir), 0);
	/* One rank that exits by itself; mj_end ends the job by its pids
	 * and process group whatever happened. */
	j = mj_start("mpirun", prog, 1, dir);
	cr_assert_not_null(j, "cannot start mpirun");
	rc = mj_wait_exit(j, 60000);
	out = mj_slurp(j->out);
	if (rc || !WIFEXITED(j->status) || WEXITSTATUS(j->status)) {
		char *err = mj_slurp(j->err);

		mj_end(j);
		cr_assert_fail("mpirun %s:\n%s", rc ? "did not end in 60 s" :
			       "failed", err ? err : "");
	}
	mj_end(j);
	cr_assert(out && strstr(out, "--\n"), "no maps from the rank:\n%s",
		  out ? out : "");
	exe = realpath(prog, NULL);
	c = es_cache_new();
	cr_assert_eq(es_view_from_maps(c, strstr(out, "--\n") + 3, exe, &v),
		     0);
	/* Copy-relocated into the PIE executable, not libmpi's copy. */
	cr_assert_eq(es_proc_lookup_obj(v, "ompi_mpi_comm_world", &a, &o), 0);
	cr_expect_eq(a, printed(out, "ompi_mpi_comm_world"));
	cr_expect_str_eq(o->path, exe);
	cr_assert_eq(es_proc_lookup(v, "MPIR_dll_name", &a), 0);
	cr_expect_eq(a, printed(out, "MPIR_dll_name"));
	cr_expect_eq(es_proc_lookup(v, "mca_pml_base_send_requests", NULL), 0);
	cr_expect_eq(es_proc_lookup(v, "MPIR_Ignore_queues", NULL),
		     -MD_E_NOSYM);
	es_view_free(v);
	es_cache_free(c);
	free(exe);
	free(out);
	free(prog);
	ef_rmtree(dir);
}

Test(elfsym, views_of_many_ranks_share_the_images_each_with_its_own_bias)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_image *lib;
	uint64_t val, a;
	int i;

	cr_assert_eq(es_cache_get(c, p.lib, &lib), 0);
	cr_assert_eq(es_lookup(lib, "lib_func", &val), 0);
	/* The same files at other addresses in every rank (ASLR). */
	for (i = 0; i < 32; i++) {
		uint64_t pb = 0x555555554000ULL + (uint64_t)i * 0x10000000ULL;
		uint64_t lb = 0x7f1000000000ULL + (uint64_t)i * 0x100000000ULL;
		char *maps = xasprintf(
			"%llx-%llx r--p 00000000 08:01 41 %s\n"
			"%llx-%llx r--p 00000000 08:01 42 %s\n"
			"%llx-%llx r-xp 00001000 08:01 42 %s\n",
			(unsigned long long)pb, (unsigned long long)pb + 0x1000,
			p.prog, (unsigned long long)lb,
			(unsigned long long)lb + 0x1000, p.lib,
			(unsigned long long)lb + 0x1000,
			(unsigned long long)lb + 0x2000, p.lib);
		struct es_view *v;

		cr_assert_eq(es_view_from_maps(c, maps, p.prog, &v), 0);
		cr_assert_eq(es_view_count(v), 2);
		cr_expect_str_eq(es_view_object(v, 0)->path, p.prog);
		cr_expect_eq(es_view_object(v, 1)->bias, lb);
		cr_assert_eq(es_proc_lookup(v, "lib_func", &a), 0);
		cr_expect_eq(a, val + lb);
		es_view_free(v);
		free(maps);
	}
	cr_expect_eq(es_cache_count(c), 2, "each image opened once");
	es_cache_free(c);
	free_pair(&p);
}

Test(elfsym, file_mapped_only_shared_is_not_a_loaded_object)
{
	struct pair p = build_pair();
	struct es_cache *c = es_cache_new();
	struct es_view *v;
	char *maps = xasprintf("7f1000000000-7f1000001000 rw-s 00000000 "
			       "08:01 42 %s\n", p.lib);

	/* Open MPI's shared-memory segments, new in every rank, are
	 * mapped MAP_SHARED; ld.so maps objects private. */
	cr_assert_eq(es_view_from_maps(c, maps, NULL, &v), 0);
	cr_expect_eq(es_view_count(v), 0);
	cr_expect_eq(es_cache_count(c), 0, "the file was not opened");
	es_view_free(v);
	es_cache_free(c);
	free(maps);
	free_pair(&p);
}

/* This process's own link_map list, as collect_view.c reads a rank's. */
static struct es_link *own_links(unsigned *n)
{
	struct es_link *l = NULL;

	*n = 0;
	for (struct link_map *m = _r_debug.r_map; m; m = m->l_next) {
		l = realloc(l, (*n + 1) * sizeof(*l));
		cr_assert_not_null(l);
		l[*n].name = m->l_name ? m->l_name : "";
		l[(*n)++].addr = m->l_addr;
	}
	return l;
}

static char *own_maps(void)
{
	char *text = mj_slurp("/proc/self/maps");

	cr_assert_not_null(text);
	return text;
}

Test(elfsym, view_from_link_map_list_is_the_view_from_maps)
{
	struct es_cache *c = es_cache_new();
	struct es_view *vm = NULL, *vl = NULL;
	char exe[4096] = "", *maps = own_maps();
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct es_link *l;
	unsigned n;

	cr_assert_gt(k, 0);
	exe[k] = '\0';
	cr_assert_eq(es_view_from_maps(c, maps, exe, &vm), 0);
	l = own_links(&n);
	cr_assert_gt(n, 2);
	cr_assert_eq(es_links_learn(c, l, n), 0);
	cr_assert_eq(es_view_from_links(c, l, n, &vl), 0);
	cr_assert_eq(es_view_count(vl), es_view_count(vm));
	for (unsigned i = 0; i < es_view_count(vm); i++) {
		const struct es_object *a = es_view_object(vm, i);
		const struct es_object *b = es_view_object(vl, i);

		cr_expect_str_eq(b->path, a->path, "object %u", i);
		cr_expect_eq(b->bias, a->bias, "%s", a->path);
		cr_expect_eq(b->start, a->start, "%s", a->path);
		cr_expect_eq(b->img, a->img, "%s", a->path);
	}
	es_view_free(vl);
	vl = NULL;
	/* A list naming an object not learnt is another list of images:
	 * the maps must be read. */
	l = realloc(l, (n + 1) * sizeof(*l));
	l[n] = (struct es_link){ "/nonexistent/libnew.so", 0x7f0000000000 };
	cr_expect_eq(es_view_from_links(c, l, n + 1, &vl), -MD_E_NOSYM);
	cr_expect_null(vl);
	/* Nor one that lacks an object (the executable, first). */
	cr_expect_eq(es_view_from_links(c, l + 1, n - 1, &vl), -MD_E_NOSYM);
	cr_expect_null(vl);
	free(l);
	es_view_free(vm);
	es_cache_free(c);
	free(maps);
}

Test(elfsym, view_from_links_needs_a_learnt_list)
{
	struct es_cache *c = es_cache_new();
	struct es_view *v = NULL;
	struct es_link l = { "", 0 };

	cr_expect_eq(es_view_from_links(c, &l, 1, &v), -MD_E_NOSYM);
	cr_expect_null(v);
	es_cache_free(c);
}

/* Read-only segments come from the file and equal what this process
 * holds there; writable data does not. */
static int some_data = 42;

Test(elfsym, read_only_bytes_from_the_file_are_what_the_process_holds)
{
	struct es_cache *c = es_cache_new();
	char *maps = ef_output("cat /proc/%d/maps", (int)getpid());
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct es_view *v;
	const struct es_object *obj;
	struct es_eh_table eh;
	unsigned char buf[256];
	uint64_t word;

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	cr_assert_not_null(maps);
	cr_assert_eq(es_view_from_maps(c, maps, exe, &v), 0);
	obj = es_proc_object_at(v, (uint64_t)(uintptr_t)&some_data);
	cr_assert_not_null(obj);
	cr_assert_eq(es_image_eh_table(obj->img, &eh), 0);
	cr_assert_eq(es_image_read_ro(obj->img, eh.hdr, buf, sizeof(buf)), 0);
	cr_expect_eq(memcmp(buf, (void *)(uintptr_t)(obj->bias + eh.hdr),
			    sizeof(buf)),
		     0);
	cr_expect_eq(es_image_read_ro(obj->img,
				      (uint64_t)(uintptr_t)&some_data -
					      obj->bias,
				      &word, sizeof(word)),
		     -MD_E_FAULT, "writable data is the process's own");
	/* The test program is a PIE: its ELF header is at vaddr 0. */
	cr_expect_eq(es_image_read_ro(obj->img, 0, &word, sizeof(word)), 0);
	cr_expect_eq(memcmp(&word, "\177ELF", 4), 0);
	es_view_free(v);
	es_cache_free(c);
	free(maps);
}

/* A stripped library (as distributions ship them): a name it does not
 * define is refused by its .gnu.hash without reading its symbols; one it
 * defines is found as in the unstripped file. */
Test(elfsym, stripped_library_says_not_here_without_an_index)
{
	struct pair p = build_pair();
	char *stripped = xasprintf("%s/libstripped.so", p.dir);
	struct es_image *full, *img;
	uint64_t want, got;
	char name[32];

	cr_assert_eq(ef_sh("strip -o '%s' '%s'", stripped, p.lib), 0);
	cr_assert_eq(es_image_open(p.lib, &full), 0);
	cr_assert_eq(es_lookup(full, "lib_func", &want), 0);
	cr_assert_eq(es_image_open(stripped, &img), 0);
	cr_expect_not_null(img->gh, "a stripped file's .gnu.hash is used");
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "MPIR_absent_%d", i);
		cr_expect_eq(es_lookup(img, name, &got), -MD_E_NOSYM);
	}
	cr_expect_eq(es_lookup(img, "lib_local", &got), -MD_E_NOSYM,
		     "a static function is not in .dynsym");
	cr_expect_not(img->indexed, "no index was needed to say no");
	cr_assert_eq(es_lookup(img, "lib_func", &got), 0);
	cr_expect_eq(got, want);
	cr_expect(img->indexed);
	cr_assert_eq(es_lookup(img, "lib_only", &got), 0);
	cr_expect_eq(es_lookup(full, "lib_only", &want), 0);
	cr_expect_eq(got, want);
	/* The unstripped file has .symtab: its index is the whole truth. */
	cr_expect_null(full->gh);
	es_image_free(full);
	es_image_free(img);
	free(stripped);
	free_pair(&p);
}
