/*
 * mqd_abi_test.c - include/mqd.h is an ABI: its layouts must match the
 * DLL's byte for byte.  Checked twice: against the LP64 layout of the
 * published interface, and against Open MPI's own msgq_interface.h
 * compiled at test time when Debian's Open MPI source is in the cache
 * (scripts/build-openmpi.sh puts it there), and against MPICH's
 * mpi_interface.h the same way (scripts/build-mpich.sh): everything
 * equal but mqs_target_type_sizes, 5 ints there (the host writes 5 for
 * MPICH, mqdhost.c).
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "mqd.h"

Test(mqd_abi, communicator_layout_matches_lp64_interface)
{
	cr_assert_eq(sizeof(struct mqd_communicator), 88);
	cr_assert_eq(offsetof(struct mqd_communicator, local_rank), 8);
	cr_assert_eq(offsetof(struct mqd_communicator, size), 16);
	cr_assert_eq(offsetof(struct mqd_communicator, name), 24);
}

Test(mqd_abi, pending_operation_layout_matches_lp64_interface)
{
	cr_assert_eq(offsetof(struct mqd_pending_operation, desired_local_rank), 8);
	cr_assert_eq(offsetof(struct mqd_pending_operation, tag_wild), 24);
	cr_assert_eq(offsetof(struct mqd_pending_operation, desired_tag), 32);
	cr_assert_eq(offsetof(struct mqd_pending_operation, system_buffer), 48);
	cr_assert_eq(offsetof(struct mqd_pending_operation, buffer), 56);
	cr_assert_eq(offsetof(struct mqd_pending_operation, actual_length), 88);
	cr_assert_eq(offsetof(struct mqd_pending_operation, extra_text), 96);
	cr_assert_eq(sizeof(struct mqd_pending_operation), 416);
	cr_assert_eq(sizeof(struct mqd_target_type_sizes), 7 * sizeof(int));
	cr_assert_eq(sizeof(struct mqd_basic_callbacks), 8 * sizeof(void *));
	cr_assert_eq(sizeof(struct mqd_image_callbacks), 6 * sizeof(void *));
	cr_assert_eq(sizeof(struct mqd_process_callbacks), 4 * sizeof(void *));
}

/* Offsets of ours, printed in the same order as the probe below. */
static char *our_layout(void)
{
	return xasprintf(
		"%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu "
		"%zu %zu %d %d %d %d %d %d\n",
		sizeof(struct mqd_communicator),
		offsetof(struct mqd_communicator, local_rank),
		offsetof(struct mqd_communicator, size),
		offsetof(struct mqd_communicator, name),
		sizeof(struct mqd_pending_operation),
		offsetof(struct mqd_pending_operation, desired_global_rank),
		offsetof(struct mqd_pending_operation, tag_wild),
		offsetof(struct mqd_pending_operation, desired_length),
		offsetof(struct mqd_pending_operation, buffer),
		offsetof(struct mqd_pending_operation, actual_local_rank),
		offsetof(struct mqd_pending_operation, actual_length),
		offsetof(struct mqd_pending_operation, extra_text),
		sizeof(struct mqd_target_type_sizes),
		sizeof(struct mqd_basic_callbacks),
		sizeof(struct mqd_image_callbacks),
		offsetof(struct mqd_image_callbacks, find_type_fp),
		sizeof(struct mqd_process_callbacks),
		MQD_INTERFACE_COMPATIBILITY, MQD_NO_INFORMATION,
		MQD_END_OF_LIST, MQD_UNEXPECTED_MESSAGES, MQD_ST_COMPLETE,
		MQD_FIRST_USER_CODE);
}

static const char probe_src[] =
	"#include <stdio.h>\n#include <stddef.h>\n"
	"#include PROBE_HEADER\n"
	"int main(void) {\n"
	"printf(\"%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu %zu "
	"%zu %zu %zu %d %d %d %d %d %d\\n\",\n"
	"sizeof(mqs_communicator), offsetof(mqs_communicator, local_rank),\n"
	"offsetof(mqs_communicator, size), offsetof(mqs_communicator, name),\n"
	"sizeof(mqs_pending_operation),\n"
	"offsetof(mqs_pending_operation, desired_global_rank),\n"
	"offsetof(mqs_pending_operation, tag_wild),\n"
	"offsetof(mqs_pending_operation, desired_length),\n"
	"offsetof(mqs_pending_operation, buffer),\n"
	"offsetof(mqs_pending_operation, actual_local_rank),\n"
	"offsetof(mqs_pending_operation, actual_length),\n"
	"offsetof(mqs_pending_operation, extra_text),\n"
	"sizeof(mqs_target_type_sizes), sizeof(mqs_basic_callbacks),\n"
	"sizeof(mqs_image_callbacks),\n"
	"offsetof(mqs_image_callbacks, mqs_find_type_fp),\n"
	"sizeof(mqs_process_callbacks),\n"
	"(int)MQS_INTERFACE_COMPATIBILITY, (int)mqs_no_information,\n"
	"(int)mqs_end_of_list, (int)mqs_unexpected_messages,\n"
	"(int)mqs_st_complete, (int)mqs_first_user_code);\n"
	"return 0; }\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/*
 * The layouts the probe prints when compiled against the MPI library's
 * own header hdr (copied into a temporary folder with the extra files
 * it wants, NULL-ended name/text pairs), into out.  Skips the test when
 * the source is not in the cache (what names the script that fetches
 * it).
 */
static void probe_header(const char *hdr, const char *what,
			 const char *const *extra, char *out, size_t len)
{
	char dir[] = "/tmp/md-abi-XXXXXX";
	const char *base = strrchr(hdr, '/') + 1;
	char *cmd;
	FILE *p;

	if (access(hdr, R_OK) != 0)
		cr_skip_test("%s source not in the cache (%s): run %s", what,
			     hdr, strcmp(what, "MPICH")
					  ? "scripts/build-openmpi.sh"
					  : "scripts/build-mpich.sh");
	cr_assert_not_null(mkdtemp(dir));
	for (; extra && extra[0]; extra += 2) {
		cmd = xasprintf("%s/%s", dir, extra[0]);
		write_file(cmd, extra[1]);
		free(cmd);
	}
	cmd = xasprintf("%s/probe.c", dir);
	write_file(cmd, probe_src);
	free(cmd);
	cmd = xasprintf("cp %s %s/ && cc '-DPROBE_HEADER=\"%s\"' -I%s -o "
			"%s/probe %s/probe.c && %s/probe; rm -rf %s",
			hdr, dir, base, dir, dir, dir, dir, dir);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_not_null(fgets(out, (int)len, p), "probe printed nothing");
	pclose(p);
	free(cmd);
}

static char *cached(const char *rel)
{
	const char *cache = getenv("MPID_CACHE");

	return xasprintf("%s/%s", cache ? cache : "/var/cache/mpi-deadlock",
			 rel);
}

Test(mqd_abi, layouts_match_open_mpi_msgq_interface_header)
{
	/* msgq_interface.h wants ompi_config.h only for these macros. */
	static const char *const extra[] = {
		"ompi_config.h", "#define BEGIN_C_DECLS\n#define END_C_DECLS\n"
				 "#define OMPI_DECLSPEC\n",
		NULL
	};
	char *hdr = cached("src/openmpi-4.1.4/ompi/debuggers/msgq_interface.h");
	char out[512] = "", *mine;

	probe_header(hdr, "Open MPI", extra, out, sizeof(out));
	mine = our_layout();
	cr_assert_str_eq(mine, out, "ours: %s open mpi: %s", mine, out);
	free(mine);
	free(hdr);
}

Test(mqd_abi, layouts_match_mpich_mpi_interface_header_but_type_sizes)
{
	char *hdr = cached("src-mpich/pristine/mpich-4.0.2/src/mpi/debugger/"
			   "mpi_interface.h");
	char out[512] = "", *mine, *want, *w;
	size_t ours = sizeof(struct mqd_target_type_sizes), five = 5 * sizeof(int);

	probe_header(hdr, "MPICH", NULL, out, sizeof(out));
	mine = our_layout();
	/* The 13th number is sizeof(mqs_target_type_sizes). */
	w = mine;
	for (int i = 0; i < 12; i++)
		w = strchr(w, ' ') + 1;
	cr_assert(!strncmp(w, "28 ", 3), "ours: %s", mine);
	want = xasprintf("%.*s%zu%s", (int)(w - mine), mine, five, w + 2);
	cr_expect_neq(ours, five);
	cr_assert_str_eq(want, out, "ours (5-int sizes): %s mpich: %s", want,
			 out);
	free(want);
	free(mine);
	free(hdr);
}
