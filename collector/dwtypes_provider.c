/*
 * dwtypes_provider.c - the Open MPI type provider (part of dwtypes): for a
 * libmpi without DWARF and without a debug file, compile
 * collector/typeprov/ompi_types.c with -g against the installed Open MPI
 * headers, once, into a cache folder, and read the layouts from that
 * object's DWARF.  The providers' sources are in the binary
 * (scripts/embed.sh), so every build and install has them.
 */
#include "dwtypes.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debugfile.h"
#include "md.h"

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The providers' sources (the Makefile's gen/typeprov.c). */
extern const unsigned char md_embed_ompi_types_c[], md_embed_ob1_types_c[],
	md_embed_peruse_h[];
extern const unsigned long md_embed_ompi_types_c_len,
	md_embed_ob1_types_c_len, md_embed_peruse_h_len;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* A changed provider source is a new object. */
static uint64_t fnv_provider(uint64_t h, const unsigned char *code,
			     unsigned long len)
{
	h = fnv(h, code, len);
	return fnv(h, md_embed_peruse_h, md_embed_peruse_h_len);
}

/* Identity of the headers: path, size and mtime of the two files that
 * change with every Open MPI build. */
static uint64_t fnv_headers(uint64_t h, const char *incdir)
{
	static const char *const files[] = { "mpi.h",
					     "openmpi/opal_config.h" };
	unsigned i;

	for (i = 0; i < 2; i++) {
		char *p = xasprintf("%s/%s", incdir, files[i]);
		struct stat st;

		h = fnv(h, p, strlen(p));
		if (stat(p, &st) == 0) {
			h = fnv(h, &st.st_size, sizeof(st.st_size));
			h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
		}
		free(p);
	}
	return h;
}

/* The three numbers of a version file: the lines starting with
 * prefix[0..2], each followed by a number, into v (-1 where no line
 * matched). */
static void read_version3(const char *path, const char *const prefix[3],
			  int v[3])
{
	char line[256], *end;
	FILE *f = fopen(path, "r");

	v[0] = v[1] = v[2] = -1;
	while (f && fgets(line, sizeof(line), f))
		for (int i = 0; i < 3; i++) {
			size_t n = strlen(prefix[i]);
			long x;

			if (strncmp(line, prefix[i], n) != 0)
				continue;
			x = strtol(line + n, &end, 10);
			if (end != line + n)
				v[i] = (int)x;
			break;
		}
	if (f)
		fclose(f);
}

/* mpi.h's OMPI_{MAJOR,MINOR,RELEASE}_VERSION into v (-1: none). */
static void headers_numbers(const char *incdir, int v[3])
{
	static const char *const fmt[3] = {
		"#define OMPI_MAJOR_VERSION ",
		"#define OMPI_MINOR_VERSION ",
		"#define OMPI_RELEASE_VERSION ",
	};
	char *p = xasprintf("%s/mpi.h", incdir);

	read_version3(p, fmt, v);
	free(p);
}

/* "4.1.4" from mpi.h. */
static char *headers_version(const char *incdir)
{
	int v[3];

	headers_numbers(incdir, v);
	if (v[0] < 0)
		return xstrdup("(unknown version)");
	return xasprintf("%d.%d.%d", v[0], v[1], v[2]);
}

char *dt_headers_missing(const char *incdir, bool given)
{
	static const char *const files[] = { "mpi.h",
					     "openmpi/ompi_config.h" };
	char *path = NULL, *msg = NULL;

	for (size_t i = 0; i < 2 && !msg; i++) {
		free(path);
		path = xasprintf("%s/%s", incdir, files[i]);
		if (is_file(path))
			continue;
		if (!given)
			msg = xasprintf("no Open MPI headers: %s is not there; "
					"install them (apt-get install "
					"libopenmpi-dev) or set MD_OMPI_INCDIR "
					"to the include folder of the job's "
					"Open MPI", path);
		else if (!is_dir(incdir))
			msg = xasprintf("MD_OMPI_INCDIR=%s is not a folder "
					"(no %s there): set it to the "
					"include folder of the job's Open "
					"MPI, or unset it to use %s", incdir,
					files[i], DT_OMPI_INCDIR);
		else
			msg = xasprintf("MD_OMPI_INCDIR=%s names a folder "
					"without %s: set it to the include "
					"folder of the job's Open MPI, or "
					"unset it to use %s", incdir,
					files[i], DT_OMPI_INCDIR);
	}
	free(path);
	return msg;
}

static int write_file(const char *path, const unsigned char *data,
		      unsigned long len)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f || fwrite(data, 1, len, f) != len)
		ret = -MD_E_SYS;
	if (f && fclose(f) != 0)
		ret = -MD_E_SYS;
	if (ret)
		md_error("type provider: writing %s: %s", path,
			 strerror(errno ? errno : EIO));
	return ret;
}

/* Run cc with its output to log; returns its exit status or -1. */
static int run_cc(char *const argv[], const char *log)
{
	int st, fd;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		/* report_cc reads it back. */
		if (fd >= 0)
			dprintf(fd, "%s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* What one provider is compiled from. */
struct prov {
	const unsigned char *code;	/* the provider's source */
	unsigned long len;
	const char *name;	/* "ompi_types.c" or "ob1_types.c" */
	const char *incdir;	/* installed headers */
	bool incdir_given;	/* incdir is the user's MD_OMPI_INCDIR */
	const char *srcdir;	/* Open MPI source tree, or NULL */
};

/* The first line of log that says "error", else its first line; NULL
 * when it is empty or unreadable.  Malloc'ed. */
static char *first_error(const char *log)
{
	char line[512], *first = NULL, *err = NULL;
	FILE *f = fopen(log, "r");

	while (f && !err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (strstr(line, "error"))
			err = xstrdup(line);
		else if (!first)
			first = xstrdup(line);
	}
	if (f)
		fclose(f);
	if (err) {
		free(first);
		return err;
	}
	return first;
}

/* The headers of a failed compile are not Open MPI 4.x's (v: mpi.h's
 * version numbers, v[0] -1 without any). */
static void report_not_4(const struct prov *p, const int v[3],
			 const char *cc, const char *c, const char *log)
{
	char *what = v[0] < 0 ? xstrdup("of no Open MPI (their mpi.h has no "
					"OMPI_MAJOR_VERSION)")
			      : xasprintf("of Open MPI %d.%d.%d", v[0],
					  v[1], v[2]);

	md_error("type provider: the headers in %s are %s, not of an Open "
		 "MPI 4.x, the only one this provider knows (%s -g -c %s "
		 "failed, compiler output in %s): %s MD_OMPI_INCDIR to the "
		 "include folder of the job's Open MPI 4.x%s",
		 p->incdir, what, cc, c, log,
		 p->incdir_given ? "fix" : "set",
		 p->incdir_given ? ", or unset it" : "");
	free(what);
}

/*
 * Why cc failed, and the fix: a compiler that could not run (exit 127,
 * run_cc's line in the log says why), headers that are not Open MPI 4.x
 * (mpi.h's OMPI_MAJOR_VERSION), or the compiler's own first error.
 */
static void report_cc(const char *cc, bool cc_given, int st,
		      const struct prov *p, const char *c, const char *log)
{
	char *why = first_error(log);
	int v[3];

	headers_numbers(p->incdir, v);
	if (st == 127 && cc_given)
		md_error("type provider: CC=%s is not runnable (%s): set CC "
			 "to a C compiler, or unset it to use cc",
			 cc, why ? why : "see its output in the log");
	else if (st == 127)
		md_error("type provider: cannot run the C compiler '%s' (%s): "
			 "install one (apt-get install gcc) or set CC",
			 cc, why ? why : "see its output in the log");
	else if (v[0] != 4)
		report_not_4(p, v, cc, c, log);
	else
		md_error("type provider: %s -g -c %s failed against the Open "
			 "MPI %d.%d.%d headers in %s%s%s: %s (compiler output "
			 "in %s)", cc, c, v[0], v[1], v[2], p->incdir,
			 p->srcdir ? " and sources in " : "",
			 p->srcdir ? p->srcdir : "",
			 why ? why : "no message", log);
	free(why);
}

/* Write the sources into dir (a fresh folder) and compile them into
 * obj; work files stay in dir.  The installed headers come first, so the
 * installed config headers (those of the build that runs) win over
 * anything in a source tree. */
static int compile_provider(const struct prov *p, const char *dir,
			    const char *obj)
{
	char *inc = xasprintf("%s/inc/ompi/peruse", dir);
	char *peruse = xasprintf("%s/peruse.h", inc);
	char *c = xasprintf("%s/%s", dir, p->name);
	char *i1 = xasprintf("-I%s/inc", dir);
	char *i2 = xasprintf("-I%s/openmpi", p->incdir);
	char *i3 = xasprintf("-I%s", p->incdir);
	char *i4 = p->srcdir ? xasprintf("-I%s", p->srcdir) : NULL;
	char *log = xasprintf("%s/cc.log", dir);
	const char *env_cc = getenv("CC");
	bool cc_given = env_cc && *env_cc;
	const char *cc = cc_given ? env_cc : "cc";
	char *argv[] = { (char *)cc, (char *)"-g", (char *)"-c", (char *)"-o",
			 (char *)obj, c, i1, i2, i3, i4, NULL };
	int ret = md_mkdir_p(inc), st;

	if (ret)
		md_error("mkdir -p %s: %s", inc, strerror(errno));
	if (!ret)
		ret = write_file(peruse, md_embed_peruse_h,
				 md_embed_peruse_h_len);
	if (!ret)
		ret = write_file(c, p->code, p->len);
	if (!ret && (st = run_cc(argv, log)) != 0) {
		report_cc(cc, cc_given, st, p, c, log);
		ret = -MD_E_NOTYPES;
	}
	free(inc);
	free(peruse);
	free(c);
	free(i1);
	free(i2);
	free(i3);
	free(i4);
	free(log);
	return ret;
}

static int build_in(const struct prov *p, const char *cache,
		    const char *final)
{
	char *work = xasprintf("%s/build-XXXXXX", cache), *obj = NULL;
	int ret = md_mkdir_p(cache);

	if (ret)
		md_error("mkdir -p %s: %s", cache, strerror(errno));
	if (!ret && !mkdtemp(work)) {
		md_error("mkdtemp(%s): %s", work, strerror(errno));
		ret = -MD_E_SYS;
	}
	if (!ret) {
		obj = xasprintf("%s/types.o", work);
		ret = compile_provider(p, work, obj);
	}
	/* rename is atomic: two collectors building at once both succeed. */
	if (!ret && rename(obj, final) != 0) {
		md_error("rename(%s, %s): %s", obj, final, strerror(errno));
		ret = -MD_E_SYS;
	}
	if (!ret) {
		/* Only our own fresh folder: the log, the copied header. */
		char *cmd[] = { (char *)"rm", (char *)"-rf", work, NULL };
		char *log = xasprintf("%s/rm.log", cache);

		run_cc(cmd, log);
		unlink(log);
		free(log);
	}
	free(obj);
	free(work);
	return ret;
}

int dt_provider_build(const char *cache_dir, const char *incdir,
		      char **obj_path, char **how)
{
	char *cache, *final, *version, *hdr;
	uint64_t h = 0xcbf29ce484222325ULL;
	bool given;
	int ret = 0;

	*obj_path = *how = NULL;
	given = incdir != NULL;
	if (!incdir)
		incdir = DT_OMPI_INCDIR;
	hdr = dt_headers_missing(incdir, given);
	if (hdr) {
		md_error("type provider: %s", hdr);
		free(hdr);
		return -MD_E_NOTYPES;
	}
	h = fnv_provider(h, md_embed_ompi_types_c, md_embed_ompi_types_c_len);
	h = fnv_headers(fnv(h, incdir, strlen(incdir)), incdir);
	cache = cache_dir ? xstrdup(cache_dir) : md_cache_dir();
	final = xasprintf("%s/ompi-types-%016llx.o", cache,
			  (unsigned long long)h);
	if (!is_file(final)) {
		struct prov p = { md_embed_ompi_types_c,
				  md_embed_ompi_types_c_len, "ompi_types.c",
				  incdir, given, NULL };

		ret = build_in(&p, cache, final);
	}
	version = headers_version(incdir);
	if (!ret) {
		*obj_path = final;
		*how = xasprintf("type provider compiled from Open MPI %s "
				 "headers (%s) into %s", version, incdir, final);
	} else {
		free(final);
	}
	free(version);
	free(cache);
	return ret;
}

int dt_index_open_mpi(const char *libmpi_path, const char *cache_dir,
		      const char *incdir, struct dt_index **out)
{
	char *obj = NULL, *how = NULL;
	int ret = dt_index_open(libmpi_path, out, NULL);

	if (ret != -MD_E_NOTYPES)
		return ret;
	md_info("%s has no DWARF and no separate debug file under %s: "
		"using the type provider", libmpi_path, DF_DEBUG_ROOT);
	ret = dt_provider_build(cache_dir, incdir, &obj, &how);
	if (!ret) {
		ret = dt_index_open(obj, out, NULL);
		if (ret == -MD_E_NOTYPES)
			md_error("type provider %s has no DWARF although it "
				 "was compiled with -g: set CC to a compiler "
				 "that writes DWARF",
				 obj);
	}
	if (!ret) {
		dt_index_set_source(*out, how);
	} else {
		/* The provider said why it failed, and the fix, above. */
		md_error("no type information for %s, so no message queues: "
			 "it has no DWARF and no debug file under %s (install "
			 "its debug symbols, by build-id or .gnu_debuglink, or "
			 "use an Open MPI built with -g), and the type provider "
			 "failed as said above",
			 libmpi_path, DF_DEBUG_ROOT);
		ret = -MD_E_NOTYPES;
	}
	free(obj);
	free(how);
	return ret;
}

/* ---- the ob1 provider: layouts from the sources of the build ---- */

static bool src_version_is(const char *srcdir, const char *version)
{
	static const char *const fmt[3] = { "major=", "minor=",
					    "release=" };
	char *p = xasprintf("%s/VERSION", srcdir), *v;
	int x[3], n;

	read_version3(p, fmt, x);
	free(p);
	v = xasprintf("%d.%d.%d", x[0], x[1], x[2]);
	n = strcmp(v, version) == 0;
	free(v);
	return n;
}

/* Identity of the ob1 headers of the source tree. */
static uint64_t fnv_ob1_sources(uint64_t h, const char *srcdir)
{
	static const char *const files[] = {
		"pml_ob1_comm.h", "pml_ob1_recvreq.h", "pml_ob1_recvfrag.h",
		"pml_ob1_hdr.h", "pml_ob1_sendreq.h", "pml_ob1.h",
	};

	h = fnv(h, srcdir, strlen(srcdir));
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = xasprintf("%s/" DT_OB1_DIR "/%s", srcdir, files[i]);
		struct stat st;

		if (stat(p, &st) == 0) {
			h = fnv(h, &st.st_size, sizeof(st.st_size));
			h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
		}
		free(p);
	}
	return h;
}

/* The source tree to use, or NULL with *why. */
static char *ob1_srcdir(const char *srcdir, const char *version, char **why)
{
	char *dir, *hdr;

	if (srcdir)
		dir = xstrdup(srcdir);
	else
		dir = xasprintf("%s/openmpi-%s", DT_OMPI_SRCROOT, version);
	hdr = xasprintf("%s/" DT_OB1_DIR "/pml_ob1_comm.h", dir);
	if (!is_file(hdr) && srcdir)
		*why = xasprintf("MD_OMPI_SRCDIR=%s has no Open MPI %s sources "
				 "(no %s): set it to the tree of 'apt-get "
				 "source openmpi' of that version, or unset it "
				 "to use %s/openmpi-%s", dir, version, hdr,
				 DT_OMPI_SRCROOT, version);
	else if (!is_file(hdr))
		*why = xasprintf("no Open MPI %s sources in %s (ob1's headers "
				 "are not installed; run 'apt-get source "
				 "openmpi' in %s, or set MD_OMPI_SRCDIR)",
				 version, dir, DT_OMPI_SRCROOT);
	else if (!src_version_is(dir, version))
		*why = xasprintf("the sources in %s are not Open MPI %s, the "
				 "version of the installed headers", dir,
				 version);
	free(hdr);
	if (*why) {
		free(dir);
		return NULL;
	}
	return dir;
}

int dt_provider_build_ob1(const char *cache_dir, const char *incdir,
			  const char *srcdir, char **obj_path, char **how,
			  char **why)
{
	char *cache, *final, *version, *tree;
	uint64_t h = 0xcbf29ce484222325ULL;
	bool given;
	int ret = 0;

	*obj_path = *how = *why = NULL;
	given = incdir != NULL;
	if (!incdir)
		incdir = DT_OMPI_INCDIR;
	*why = dt_headers_missing(incdir, given);
	if (*why)
		return -MD_E_NOTYPES;
	version = headers_version(incdir);
	tree = ob1_srcdir(srcdir, version, why);
	if (!tree) {
		free(version);
		return -MD_E_NOTYPES;
	}
	h = fnv_provider(h, md_embed_ob1_types_c, md_embed_ob1_types_c_len);
	h = fnv_headers(fnv(h, incdir, strlen(incdir)), incdir);
	h = fnv_ob1_sources(h, tree);
	cache = cache_dir ? xstrdup(cache_dir) : md_cache_dir();
	final = xasprintf("%s/ob1-types-%016llx.o", cache,
			  (unsigned long long)h);
	if (!is_file(final)) {
		struct prov p = { md_embed_ob1_types_c,
				  md_embed_ob1_types_c_len, "ob1_types.c",
				  incdir, given, tree };

		ret = build_in(&p, cache, final);
	}
	if (!ret) {
		*obj_path = final;
		*how = xasprintf("ob1 type provider compiled from the Open MPI "
				 "%s sources in %s with the installed headers "
				 "(%s) into %s", version, tree, incdir, final);
	} else {
		*why = xasprintf("the ob1 type provider did not compile (the "
				 "reason is above)");
		free(final);
	}
	free(version);
	free(cache);
	free(tree);
	return ret;
}

int dt_index_open_ob1(const char *plugin, const char *cache_dir,
		      const char *incdir, const char *srcdir,
		      struct dt_index **out, char **why)
{
	char *obj = NULL, *how = NULL;
	int ret = dt_index_open(plugin, out, NULL);

	*why = NULL;
	if (ret != -MD_E_NOTYPES)
		return ret;
	ret = dt_provider_build_ob1(cache_dir, incdir, srcdir, &obj, &how,
				    why);
	if (!ret) {
		ret = dt_index_open(obj, out, NULL);
		if (ret == -MD_E_NOTYPES)
			*why = xasprintf("the ob1 type provider %s has no "
					 "DWARF", obj);
	}
	if (!ret)
		dt_index_set_source(*out, how);
	free(obj);
	free(how);
	return ret < 0 ? -MD_E_NOTYPES : 0;
}
