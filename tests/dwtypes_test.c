/*
 * dwtypes_test.c - type layouts from DWARF of files compiled here (checked
 * against the compiler's own sizeof/offsetof), from separate debug files,
 * from the Open MPI type provider and from the source-built libmpi.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collector/dwtypes.h"
#include "md.h"
#include "support/elf_fixture.h"
#include "support/tracee.h"

/* Two units: a.c sees struct opaque only declared (and first), b.c
 * defines it.  main prints the compiler's own answers. */
static const char unit_a[] =
	"struct opaque;\n"
	"typedef struct opaque opaque_t;\n"
	"opaque_t *a_ptr;\n";

static const char unit_b[] =
	"#include <stddef.h>\n"
	"#include <stdio.h>\n"
	"struct opaque { char c; double d; int tail[3]; };\n"
	"typedef struct opaque opaque_t;\n"
	"typedef struct list_item { struct list_item *next; long v; }"
	" list_item_t;\n"
	"typedef const volatile list_item_t cv_item_t;\n"
	"typedef struct { int kind; union { int i; double d; }; char end; }"
	" anon_t;\n"
	"typedef union { char b[7]; long l; } u_t;\n"
	"opaque_t o; cv_item_t *cv; anon_t an; u_t u;\n"
	"int main(void)\n"
	"{\n"
	"	printf(\"opaque_t %zu d %zu tail %zu\\n\", sizeof(opaque_t),\n"
	"	       offsetof(opaque_t, d), offsetof(opaque_t, tail));\n"
	"	printf(\"cv_item_t %zu v %zu\\n\", sizeof(list_item_t),\n"
	"	       offsetof(list_item_t, v));\n"
	"	printf(\"anon_t %zu d %zu end %zu\\n\", sizeof(anon_t),\n"
	"	       offsetof(anon_t, d), offsetof(anon_t, end));\n"
	"	printf(\"u_t %zu l %zu\\n\", sizeof(u_t), offsetof(u_t, l));\n"
	"	return 0;\n"
	"}\n";

struct prog {
	char *dir, *path, *out;
};

static struct prog build_prog(const char *flags)
{
	struct prog p;
	char *a, *extra;

	p.dir = ef_tmpdir();
	a = ef_write(p.dir, "a.c", unit_a);
	extra = xasprintf("'%s'", a);
	p.path = ef_cc(p.dir, "types", unit_b, flags, extra);
	cr_assert_not_null(p.path, "cc could not build the test program");
	p.out = ef_output("'%s'", p.path);
	cr_assert_not_null(p.out);
	free(a);
	free(extra);
	return p;
}

static void free_prog(struct prog *p)
{
	free(p->path);
	free(p->out);
	ef_rmtree(p->dir);
}

/* The number the program printed after "<type>" and after "<word>". */
static int truth(const char *out, const char *type, const char *word)
{
	const char *l = strstr(out, type), *w;
	int v;

	cr_assert_not_null(l, "no line for %s", type);
	w = word ? strstr(l, word) : l;
	cr_assert_not_null(w);
	cr_assert_eq(sscanf(w + strlen(word ? word : type), " %d", &v), 1);
	return v;
}

static void expect_layout(struct dt_index *idx, const char *out,
			  const char *type, const char *const *fields)
{
	const struct dt_type *t;

	cr_assert_eq(dt_find_type(idx, type, &t), 0, "type %s", type);
	cr_expect_eq(dt_sizeof(t), truth(out, type, NULL), "sizeof %s", type);
	for (; *fields; fields++) {
		char *w = xasprintf(" %s ", *fields);

		cr_expect_eq(dt_field_offset(t, *fields), truth(out, type, w),
			     "%s.%s", type, *fields);
		free(w);
	}
}

static void expect_all_layouts(struct dt_index *idx, const char *out)
{
	static const char *const opaque[] = { "d", "tail", NULL };
	static const char *const item[] = { "v", NULL };
	static const char *const anon[] = { "d", "end", NULL };
	static const char *const u[] = { "l", NULL };

	expect_layout(idx, out, "opaque_t", opaque);
	expect_layout(idx, out, "cv_item_t", item);
	expect_layout(idx, out, "anon_t", anon);
	expect_layout(idx, out, "u_t", u);
}

Test(dwtypes, layouts_match_the_compilers_sizeof_and_offsetof)
{
	struct prog p = build_prog("-g -O0");
	struct dt_index *idx;
	const char *src;

	cr_assert_eq(dt_index_open(p.path, &idx, &src), 0);
	cr_expect(strstr(src, "DWARF of ") == src, "source: %s", src);
	cr_expect_eq(dt_index_ncus(idx), 2);
	expect_all_layouts(idx, p.out);
	dt_index_free(idx);
	free_prog(&p);
}

Test(dwtypes, typedef_of_declared_struct_resolves_to_its_definition)
{
	struct prog p = build_prog("-g -O0");
	struct dt_index *idx;
	const struct dt_type *t, *s;

	cr_assert_eq(dt_index_open(p.path, &idx, NULL), 0);
	/* a.c comes first on the command line: its opaque_t typedef is the
	 * one indexed, and it names a declaration. */
	cr_assert_eq(dt_find_type(idx, "opaque_t", &t), 0);
	cr_assert_eq(dt_find_type(idx, "struct opaque", &s), 0);
	cr_expect_eq(dt_sizeof(t), dt_sizeof(s));
	cr_expect_gt(dt_sizeof(t), 0);
	dt_index_free(idx);
	free_prog(&p);
}

Test(dwtypes, unknown_type_and_field_answer_not_found)
{
	struct prog p = build_prog("-g -O0");
	struct dt_index *idx;
	const struct dt_type *t;

	cr_assert_eq(dt_index_open(p.path, &idx, NULL), 0);
	cr_expect_eq(dt_find_type(idx, "no_such_type_t", &t), -MD_E_NOTYPES);
	cr_expect_null(t);
	cr_assert_eq(dt_find_type(idx, "opaque_t", &t), 0);
	cr_expect_eq(dt_field_offset(t, "no_such_field"), -MD_E_NOSYM);
	dt_index_free(idx);
	free_prog(&p);
}

Test(dwtypes, file_without_dwarf_gives_notypes)
{
	struct prog p = build_prog("-O0");
	struct dt_index *idx = (struct dt_index *)1;

	cr_expect_eq(dt_index_open(p.path, &idx, NULL), -MD_E_NOTYPES);
	cr_expect_null(idx);
	free_prog(&p);
}

/* Split file into a stripped copy with a debuglink and a debug file in
 * .debug/ beside it, as distributions ship them. */
static char *split(const char *dir, const char *file, char **dbg)
{
	char *stripped = xasprintf("%s/stripped", dir);

	cr_assert_eq(ef_sh("mkdir -p '%s/.debug'", dir), 0);
	*dbg = xasprintf("%s/.debug/stripped.debug", dir);
	cr_assert_eq(ef_sh("objcopy --only-keep-debug '%s' '%s' && "
			   "objcopy --strip-debug --add-gnu-debuglink='%s' "
			   "'%s' '%s'", file, *dbg, *dbg, file, stripped),
		     0, "objcopy failed");
	return stripped;
}

Test(dwtypes, reads_types_from_separate_debug_file)
{
	struct prog p = build_prog("-g -O0");
	struct dt_index *idx;
	const char *src;
	char *dbg, *stripped = split(p.dir, p.path, &dbg);

	cr_assert_eq(dt_index_open(stripped, &idx, &src), 0);
	cr_expect(strstr(src, "separate debug file") == src, "source: %s", src);
	cr_expect_not_null(strstr(src, dbg), "source: %s", src);
	expect_all_layouts(idx, p.out);
	dt_index_free(idx);
	free(dbg);
	free(stripped);
	free_prog(&p);
}

Test(dwtypes, debug_file_with_wrong_crc_is_not_used)
{
	struct prog p = build_prog("-g -O0");
	struct dt_index *idx;
	char *dbg, *stripped = split(p.dir, p.path, &dbg);

	/* Another build of the debug file: same name, other contents (and
	 * nothing under /usr/lib/debug/.build-id for this temp file). */
	cr_assert_eq(ef_sh("printf x >> '%s'", dbg), 0);
	cr_expect_eq(dt_index_open(stripped, &idx, NULL), -MD_E_NOTYPES);
	free(dbg);
	free(stripped);
	free_prog(&p);
}

/* What Open MPI 4.1.4's DLL asks: every mqs_find_type and
 * ompi_field_offset in ompi/debuggers/ompi_common_dll.c (outside #if 0),
 * regenerate with:
 *   sed -e '/^#if 0/,/^#endif/d' ompi_common_dll.c | tr '\n' ' ' |
 *   grep -o 'ompi_field_offset([^;]*;' | awk -F, '{print $3 $4}'
 * and what collector/topo.c reads beside it (topologies, and groups from
 * the members' process names).
 */
static const char *const ompi_fields[][2] = {
	{ "opal_list_item_t", "opal_list_next" },
	{ "opal_list_t", "opal_list_sentinel" },
	{ "opal_free_list_item_t", NULL },
	{ "opal_free_list_t", "fl_mpool" },
	{ "opal_free_list_t", "fl_allocations" },
	{ "opal_free_list_t", "fl_frag_class" },
	{ "opal_free_list_t", "fl_frag_size" },
	{ "opal_free_list_t", "fl_frag_alignment" },
	{ "opal_free_list_t", "fl_max_to_alloc" },
	{ "opal_free_list_t", "fl_num_per_alloc" },
	{ "opal_free_list_t", "fl_num_allocated" },
	{ "opal_hash_table_t", "ht_table" },
	{ "opal_hash_table_t", "ht_size" },
	{ "ompi_request_t", "req_type" },
	{ "ompi_request_t", "req_status" },
	{ "ompi_request_t", "req_complete" },
	{ "ompi_request_t", "req_state" },
	{ "ompi_request_t", "req_f_to_c_index" },
	{ "mca_pml_base_request_t", "req_addr" },
	{ "mca_pml_base_request_t", "req_count" },
	{ "mca_pml_base_request_t", "req_peer" },
	{ "mca_pml_base_request_t", "req_tag" },
	{ "mca_pml_base_request_t", "req_comm" },
	{ "mca_pml_base_request_t", "req_datatype" },
	{ "mca_pml_base_request_t", "req_proc" },
	{ "mca_pml_base_request_t", "req_sequence" },
	{ "mca_pml_base_request_t", "req_type" },
	{ "mca_pml_base_request_t", "req_pml_complete" },
	{ "mca_pml_base_send_request_t", "req_addr" },
	{ "mca_pml_base_send_request_t", "req_bytes_packed" },
	{ "mca_pml_base_send_request_t", "req_send_mode" },
	{ "mca_pml_base_recv_request_t", "req_bytes_packed" },
	{ "opal_pointer_array_t", "lowest_free" },
	{ "opal_pointer_array_t", "number_free" },
	{ "opal_pointer_array_t", "size" },
	{ "opal_pointer_array_t", "addr" },
	{ "ompi_communicator_t", "c_name" },
	{ "ompi_communicator_t", "c_contextid" },
	{ "ompi_communicator_t", "c_my_rank" },
	{ "ompi_communicator_t", "c_local_group" },
	{ "ompi_communicator_t", "c_remote_group" },
	{ "ompi_communicator_t", "c_flags" },
	{ "ompi_communicator_t", "c_f_to_c_index" },
	{ "ompi_communicator_t", "c_topo" },
	{ "ompi_communicator_t", "c_keyhash" },
	{ "mca_topo_base_module_t", "mtc" },
	{ "mca_topo_base_module_t", "reorder" },
	{ "mca_topo_base_comm_cart_2_2_0_t", "ndims" },
	{ "mca_topo_base_comm_cart_2_2_0_t", "dims" },
	{ "mca_topo_base_comm_cart_2_2_0_t", "periods" },
	{ "mca_topo_base_comm_cart_2_2_0_t", "coords" },
	{ "mca_topo_base_comm_graph_2_2_0_t", "nnodes" },
	{ "mca_topo_base_comm_graph_2_2_0_t", "index" },
	{ "mca_topo_base_comm_graph_2_2_0_t", "edges" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "in" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "inw" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "out" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "outw" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "indegree" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "outdegree" },
	{ "mca_topo_base_comm_dist_graph_2_2_0_t", "weighted" },
	{ "ompi_group_t", "grp_proc_count" },
	{ "ompi_group_t", "grp_proc_pointers" },
	{ "ompi_group_t", "grp_my_rank" },
	{ "ompi_group_t", "grp_flags" },
	{ "ompi_proc_t", "super" },
	{ "opal_proc_t", "proc_name" },
	{ "opal_process_name_t", "jobid" },
	{ "opal_process_name_t", "vpid" },
	{ "ompi_status_public_t", "MPI_SOURCE" },
	{ "ompi_status_public_t", "MPI_TAG" },
	{ "ompi_status_public_t", "MPI_ERROR" },
	{ "ompi_status_public_t", "_ucount" },
	{ "ompi_status_public_t", "_cancelled" },
	{ "ompi_datatype_t", "super" },
	{ "ompi_datatype_t", "name" },
	{ "opal_datatype_t", "size" },
};

#define N_OMPI_FIELDS (sizeof(ompi_fields) / sizeof(ompi_fields[0]))

/* Every type the DLL asks for is found, with a size and its fields. */
static void expect_ompi_types(struct dt_index *idx)
{
	const struct dt_type *t;
	size_t i;

	for (i = 0; i < N_OMPI_FIELDS; i++) {
		cr_assert_eq(dt_find_type(idx, ompi_fields[i][0], &t), 0,
			     "type %s missing (%s)", ompi_fields[i][0],
			     dt_index_source(idx));
		cr_expect_gt(dt_sizeof(t), 0, "sizeof %s", ompi_fields[i][0]);
		if (ompi_fields[i][1])
			cr_expect_geq(dt_field_offset(t, ompi_fields[i][1]), 0,
				      "%s.%s", ompi_fields[i][0],
				      ompi_fields[i][1]);
	}
}

static char *ompi_g_libmpi(void)
{
	const char *prefix = ef_ompi_g_prefix();

	if (!prefix)
		return NULL;
	return xasprintf("%s/lib/libmpi.so", prefix);
}

Test(dwtypes, source_built_libmpi_index_has_every_type_the_dll_asks_for)
{
	char *lib = ompi_g_libmpi();
	struct dt_index *idx;

	if (!lib)
		cr_skip_test("no source-built Open MPI (run "
			     "scripts/build-openmpi.sh)");
	cr_assert_eq(dt_index_open(lib, &idx, NULL), 0);
	cr_log_info("libmpi type index: %u units, %u types, %.3f s",
		    dt_index_ncus(idx), dt_index_ntypes(idx),
		    dt_index_build_ns(idx) / 1e9);
	fprintf(stderr, "dwtypes: libmpi type index: %u units, %u types, "
		"%.3f s\n", dt_index_ncus(idx), dt_index_ntypes(idx),
		dt_index_build_ns(idx) / 1e9);
	/* The time is printed, not checked: speed belongs in make bench
	 * (bench-collect's setup phase), not in a test on a shared machine. */
	cr_expect_gt(dt_index_ncus(idx), 500);
	expect_ompi_types(idx);
	dt_index_free(idx);
	free(lib);
}

Test(dwtypes, provider_gives_all_types_the_dll_asks_for)
{
	char *dir = ef_tmpdir(), *obj, *how, *obj2, *how2;
	struct dt_index *idx;

	if (!ef_exists(DT_OMPI_INCDIR "/openmpi/ompi_config.h"))
		cr_skip_test("no Open MPI headers in " DT_OMPI_INCDIR
			     " (install libopenmpi-dev)");
	cr_assert_eq(dt_provider_build(dir, NULL, &obj, &how), 0);
	cr_expect(strstr(how, "type provider compiled from Open MPI ") == how,
		  "how: %s", how);
	cr_assert_eq(dt_index_open(obj, &idx, NULL), 0);
	expect_ompi_types(idx);
	dt_index_free(idx);
	/* Built once: the second call finds the same object. */
	cr_assert_eq(dt_provider_build(dir, NULL, &obj2, &how2), 0);
	cr_expect_str_eq(obj, obj2);
	free(obj);
	free(how);
	free(obj2);
	free(how2);
	ef_rmtree(dir);
}

Test(dwtypes, provider_layouts_equal_the_source_built_libmpi)
{
	char *lib = ompi_g_libmpi(), *dir, *obj, *how;
	struct dt_index *want, *got;
	size_t i;

	if (!lib)
		cr_skip_test("no source-built Open MPI (run "
			     "scripts/build-openmpi.sh)");
	dir = ef_tmpdir();
	cr_assert_eq(dt_provider_build(dir, NULL, &obj, &how), 0);
	cr_assert_eq(dt_index_open(lib, &want, NULL), 0);
	cr_assert_eq(dt_index_open(obj, &got, NULL), 0);
	for (i = 0; i < N_OMPI_FIELDS; i++) {
		const char *ty = ompi_fields[i][0], *f = ompi_fields[i][1];
		const struct dt_type *a, *b;

		cr_assert_eq(dt_find_type(want, ty, &a), 0, "%s in libmpi", ty);
		cr_assert_eq(dt_find_type(got, ty, &b), 0, "%s in provider", ty);
		/* ompi_proc_t's size follows the build's endpoint tags
		 * (OMPI_PROC_ENDPOINT_TAG_MAX); only its name is read. */
		if (strcmp(ty, "ompi_proc_t"))
			cr_expect_eq(dt_sizeof(b), dt_sizeof(a), "sizeof %s",
				     ty);
		if (f)
			cr_expect_eq(dt_field_offset(b, f),
				     dt_field_offset(a, f), "%s.%s", ty, f);
	}
	dt_index_free(want);
	dt_index_free(got);
	free(obj);
	free(how);
	free(lib);
	ef_rmtree(dir);
}

Test(dwtypes, stripped_libmpi_reads_types_from_its_debug_file)
{
	char *lib = ompi_g_libmpi(), *dir, *dbg, *stripped;
	struct dt_index *idx;
	const char *src;

	if (!lib)
		cr_skip_test("no source-built Open MPI (run "
			     "scripts/build-openmpi.sh)");
	dir = ef_tmpdir();
	stripped = split(dir, lib, &dbg);
	cr_assert_eq(dt_index_open(stripped, &idx, &src), 0);
	cr_expect_not_null(strstr(src, "separate debug file"), "%s", src);
	expect_ompi_types(idx);
	dt_index_free(idx);
	free(dbg);
	free(stripped);
	free(lib);
	ef_rmtree(dir);
}

Test(dwtypes, debian_libmpi_falls_back_to_the_provider)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";
	char *dir;
	struct dt_index *idx;

	if (!ef_exists(lib) ||
	    !ef_exists(DT_OMPI_INCDIR "/openmpi/ompi_config.h"))
		cr_skip_test("Debian's libmpi.so.40 and headers not installed");
	dir = ef_tmpdir();
	cr_assert_eq(dt_index_open_mpi(lib, dir, NULL, &idx), 0);
	/* With the dbgsym package installed the debug file wins. */
	cr_expect(strstr(dt_index_source(idx), "type provider") ||
		  strstr(dt_index_source(idx), "separate debug file"),
		  "source: %s", dt_index_source(idx));
	expect_ompi_types(idx);
	dt_index_free(idx);
	ef_rmtree(dir);
}

/* Debian's stripped libmpi with no debug file and MD_OMPI_INCDIR set
 * wrong: the setting is named as the cause, with the other remedies. */
Test(dwtypes, no_types_anywhere_lists_the_remedies)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libmpi.so.40";
	struct dt_index *idx = NULL;
	char dir[] = "/tmp/md-notypes-XXXXXX", *err;
	struct tr_capture cap;
	int r;

	if (access(lib, R_OK) != 0)
		cr_skip_test("%s not installed", lib);
	cr_assert_not_null(mkdtemp(dir));
	tr_stderr_begin(&cap);
	r = dt_index_open_mpi(lib, dir, "/nonexistent", &idx);
	err = tr_stderr_end(&cap);
	rmdir(dir);
	cr_assert_eq(r, -MD_E_NOTYPES);
	cr_expect(strstr(err, "debug symbols"), "stderr: %s", err);
	cr_expect(strstr(err, "MD_OMPI_INCDIR=/nonexistent is not a folder "
			      "(no mpi.h there)") &&
		  strstr(err, "or unset it"), "stderr: %s", err);
	cr_expect(!strstr(err, "libopenmpi-dev"), "stderr: %s", err);
	cr_expect(strstr(err, "built with -g"), "stderr: %s", err);
	free(err);
}

/* ---- the provider's hints name the real cause ---- */

Test(dwtypes, missing_headers_name_the_setting_or_the_package)
{
	char *dir = ef_tmpdir(), *msg, *sub;

	msg = dt_headers_missing(dir, false);
	cr_expect(msg && strstr(msg, "/mpi.h is not there") &&
		  strstr(msg, "apt-get install libopenmpi-dev"), "%s", msg);
	free(msg);
	msg = dt_headers_missing(dir, true);
	cr_expect(msg && strstr(msg, "names a folder without mpi.h") &&
		  strstr(msg, "unset it") && !strstr(msg, "libopenmpi-dev"),
		  "%s", msg);
	free(msg);
	free(ef_write(dir, "mpi.h", "#define OMPI_MAJOR_VERSION 4\n"));
	msg = dt_headers_missing(dir, true);
	cr_expect(msg && strstr(msg, "without openmpi/ompi_config.h"), "%s",
		  msg);
	free(msg);
	sub = xasprintf("%s/openmpi", dir);
	cr_assert_eq(md_mkdir_p(sub), 0);
	free(ef_write(sub, "ompi_config.h", "\n"));
	cr_expect_null(dt_headers_missing(dir, true));
	free(sub);
	ef_rmtree(dir);
}

/* A headers folder that passes the check, with mpi.h's version lines
 * (major < 0: none) and a config header that does not compile. */
static char *fake_headers(int major)
{
	char *dir = ef_tmpdir(), *sub = xasprintf("%s/openmpi", dir);
	char *mpi = major < 0 ? xstrdup("/* no version */\n")
			      : xasprintf("#define OMPI_MAJOR_VERSION %d\n"
					  "#define OMPI_MINOR_VERSION 1\n"
					  "#define OMPI_RELEASE_VERSION 4\n",
					  major);

	free(ef_write(dir, "mpi.h", mpi));
	cr_assert_eq(md_mkdir_p(sub), 0);
	free(ef_write(sub, "ompi_config.h", "#error md_fake_config\n"));
	free(mpi);
	free(sub);
	return dir;
}

/* dt_provider_build's stderr against the headers in inc, with PATH set
 * to path during the build (NULL: as it is). */
static char *build_err(const char *inc, const char *path)
{
	char *cache = ef_tmpdir(), *obj = NULL, *how = NULL, *err;
	char *saved = xstrdup(getenv("PATH") ? getenv("PATH") : "");
	struct tr_capture cap;
	int r;

	if (path)
		setenv("PATH", path, 1);
	tr_stderr_begin(&cap);
	r = dt_provider_build(cache, inc, &obj, &how);
	err = tr_stderr_end(&cap);
	setenv("PATH", saved, 1);
	free(saved);
	cr_expect_eq(r, -MD_E_NOTYPES);
	cr_expect_null(obj);
	ef_rmtree(cache);
	return err;
}

Test(dwtypes, cc_set_and_not_runnable_names_the_setting)
{
	char *inc = fake_headers(4), *err;

	setenv("CC", "/nonexistent-cc", 1);
	err = build_err(inc, NULL);
	unsetenv("CC");
	cr_expect(strstr(err, "CC=/nonexistent-cc is not runnable (No such "
			      "file or directory)") &&
		  strstr(err, "unset it") && !strstr(err, "apt-get"),
		  "stderr: %s", err);
	free(err);
	ef_rmtree(inc);
}

Test(dwtypes, no_cc_in_path_says_to_install_one)
{
	char *inc = fake_headers(4), *empty = ef_tmpdir(), *err;

	unsetenv("CC");
	err = build_err(inc, empty);
	cr_expect(strstr(err, "cannot run the C compiler 'cc' (No such file "
			      "or directory)") &&
		  strstr(err, "apt-get install gcc"), "stderr: %s", err);
	free(err);
	ef_rmtree(empty);
	ef_rmtree(inc);
}

Test(dwtypes, headers_of_another_open_mpi_are_named_by_their_version)
{
	char *inc = fake_headers(5), *none = fake_headers(-1), *err;

	unsetenv("CC");
	err = build_err(inc, NULL);
	cr_expect(strstr(err, "are of Open MPI 5.1.4, not of an Open MPI "
			      "4.x") &&
		  strstr(err, "fix MD_OMPI_INCDIR"), "stderr: %s", err);
	free(err);
	err = build_err(none, NULL);
	cr_expect(strstr(err, "are of no Open MPI (their mpi.h has no "
			      "OMPI_MAJOR_VERSION)"), "stderr: %s", err);
	free(err);
	ef_rmtree(none);
	ef_rmtree(inc);
}

Test(dwtypes, other_compile_errors_show_the_compilers_first_error)
{
	char *inc = fake_headers(4), *err;

	unsetenv("CC");
	err = build_err(inc, NULL);
	cr_expect(strstr(err, "failed against the Open MPI 4.1.4 headers") &&
		  strstr(err, "md_fake_config") && strstr(err, "error"),
		  "stderr: %s", err);
	cr_expect(!strstr(err, "not of an Open MPI 4.x"), "stderr: %s", err);
	free(err);
	ef_rmtree(inc);
}
