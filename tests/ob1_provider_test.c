/*
 * ob1_provider_test.c - ob1's layouts for Debian's stripped build come
 * from the ob1 type provider (the Open MPI sources of that build compiled
 * with its installed config headers): every size and offset the walk
 * uses must equal the -g build's DWARF of mca_pml_ob1.so.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../collector/dwtypes.h"
#include "../collector/ob1q.h"
#include "md.h"
#include "support/elf_fixture.h"

/* Types from one index, else a second (the plug-in's, then libmpi's),
 * as the collector asks them. */
struct two {
	struct dt_index *a, *b;
};

static int find2(void *ctx, const char *name, void **type)
{
	struct two *t = ctx;
	const struct dt_type *ty = NULL;
	int rc = dt_find_type(t->a, name, &ty);

	if (rc < 0 && t->b)
		rc = dt_find_type(t->b, name, &ty);
	*type = (void *)ty;
	return rc;
}

static int size2(void *ctx, void *type)
{
	(void)ctx;
	return dt_sizeof(type);
}

static int offset2(void *ctx, void *type, const char *field)
{
	(void)ctx;
	return dt_field_offset(type, field);
}

static const struct mh_types_ops ops2 = {
	.find = find2, .size = size2, .offset = offset2,
};

static struct ob1_layout *layout_of(struct dt_index *a, struct dt_index *b)
{
	struct two t = { a, b };
	struct ob1_layout *l = NULL;
	char *missing = NULL;

	cr_assert_eq(ob1_layout_new(&ops2, &t, &l, &missing), 0,
		     "%s lacks %s", dt_index_source(a),
		     missing ? missing : "?");
	return l;
}

static char *srcdir(void)
{
	char *d = xasprintf("%s/openmpi-4.1.4", DT_OMPI_SRCROOT);
	char *h = xasprintf("%s/" DT_OB1_DIR "/pml_ob1_comm.h", d);
	bool ok = ef_exists(h);

	free(h);
	if (!ok) {
		free(d);
		return NULL;
	}
	return d;
}

Test(ob1_provider, every_offset_equals_the_g_builds_dwarf)
{
	const char *prefix = ef_ompi_g_prefix();
	char *dir, *obj, *how, *why, *plugin, *libmpi, *src = srcdir();
	struct dt_index *want, *want_mpi, *got;
	struct ob1_layout *lw, *lg;
	int n = ob1_layout_count();

	if (!prefix)
		cr_skip_test("no source-built Open MPI (run "
			     "scripts/build-openmpi.sh)");
	if (!src || !ef_exists(DT_OMPI_INCDIR "/openmpi/ompi_config.h"))
		cr_skip_test("no Open MPI sources under " DT_OMPI_SRCROOT
			     " or headers in " DT_OMPI_INCDIR " (run "
			     "scripts/build-openmpi.sh; install "
			     "libopenmpi-dev)");
	dir = ef_tmpdir();
	cr_assert_eq(dt_provider_build_ob1(dir, NULL, src, &obj, &how, &why),
		     0, "%s", why ? why : "");
	cr_expect(strstr(how, "ob1 type provider compiled from the Open MPI "
			      "4.1.4 sources"), "how: %s", how);
	plugin = xasprintf("%s/lib/openmpi/mca_pml_ob1.so", prefix);
	libmpi = xasprintf("%s/lib/libmpi.so", prefix);
	cr_assert_eq(dt_index_open(plugin, &want, NULL), 0);
	cr_assert_eq(dt_index_open(libmpi, &want_mpi, NULL), 0);
	cr_assert_eq(dt_index_open(obj, &got, NULL), 0);
	lw = layout_of(want, want_mpi);
	lg = layout_of(got, NULL);
	for (int i = 0; i < n; i++)
		cr_expect_eq(ob1_layout_value(lg, i), ob1_layout_value(lw, i),
			     "%s: provider %ld, -g build %ld",
			     ob1_layout_name(i), ob1_layout_value(lg, i),
			     ob1_layout_value(lw, i));
	cr_log_info("%d ob1 layout values equal", n);
	ob1_layout_free(lw);
	ob1_layout_free(lg);
	dt_index_free(want);
	dt_index_free(want_mpi);
	dt_index_free(got);
	free(plugin);
	free(libmpi);
	free(obj);
	free(how);
	free(src);
	ef_rmtree(dir);
}

Test(ob1_provider, built_once_and_found_again)
{
	char *dir, *obj, *how, *why, *obj2, *how2, *src = srcdir();

	if (!src || !ef_exists(DT_OMPI_INCDIR "/openmpi/ompi_config.h"))
		cr_skip_test("no Open MPI sources under " DT_OMPI_SRCROOT
			     " or headers (run scripts/build-openmpi.sh)");
	dir = ef_tmpdir();
	cr_assert_eq(dt_provider_build_ob1(dir, NULL, src, &obj, &how, &why),
		     0, "%s", why ? why : "");
	cr_assert_eq(dt_provider_build_ob1(dir, NULL, src, &obj2, &how2,
					   &why), 0);
	cr_expect_str_eq(obj, obj2);
	free(obj);
	free(how);
	free(obj2);
	free(how2);
	free(src);
	ef_rmtree(dir);
}

Test(ob1_provider, missing_sources_say_where_they_were_looked_for)
{
	char *dir = ef_tmpdir(), *obj, *how, *why = NULL;

	if (!ef_exists(DT_OMPI_INCDIR "/openmpi/ompi_config.h"))
		cr_skip_test("no Open MPI headers in " DT_OMPI_INCDIR);
	cr_expect_eq(dt_provider_build_ob1(dir, NULL, "/nonexistent/ompi",
					   &obj, &how, &why), -MD_E_NOTYPES);
	cr_expect_null(obj);
	cr_assert_not_null(why);
	cr_expect(strstr(why, "MD_OMPI_SRCDIR=/nonexistent/ompi has no Open "
			      "MPI") && strstr(why, "unset it") &&
		  strstr(why, "apt-get source openmpi"), "why: %s", why);
	free(why);
	ef_rmtree(dir);
}
