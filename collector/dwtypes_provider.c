/*
 * dwtypes_provider.c - the Open MPI type provider (part of dwtypes): for a
 * libmpi without DWARF and without a debug file, compile
 * collector/typeprov/ompi_types.c with -g against the installed Open MPI
 * headers, once, into a cache folder, and read the layouts from that
 * object's DWARF.  The provider's sources are in the binary
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

/* The provider's sources (the Makefile's gen/typeprov.c). */
extern const unsigned char md_embed_ompi_types_c[], md_embed_peruse_h[];
extern const unsigned long md_embed_ompi_types_c_len, md_embed_peruse_h_len;

static char *default_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg)
		return xasprintf("%s/mpi-deadlock", xdg);
	if (home && *home)
		return xasprintf("%s/.cache/mpi-deadlock", home);
	return xstrdup("/var/cache/mpi-deadlock/types");
}

static int mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0;

	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			md_error("mkdir(%s): %s", p, strerror(errno));
			ret = -MD_E_SYS;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* A changed provider source is a new object. */
static uint64_t fnv_provider(uint64_t h)
{
	h = fnv(h, md_embed_ompi_types_c, md_embed_ompi_types_c_len);
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

/* "4.1.4" from mpi.h's OMPI_{MAJOR,MINOR,RELEASE}_VERSION. */
static char *headers_version(const char *incdir)
{
	char *p = xasprintf("%s/mpi.h", incdir), line[256];
	int v[3] = { -1, -1, -1 }, x;
	FILE *f = fopen(p, "r");

	free(p);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define OMPI_MAJOR_VERSION %d", &x) == 1)
			v[0] = x;
		else if (sscanf(line, "#define OMPI_MINOR_VERSION %d", &x) == 1)
			v[1] = x;
		else if (sscanf(line, "#define OMPI_RELEASE_VERSION %d", &x) == 1)
			v[2] = x;
	}
	if (f)
		fclose(f);
	if (v[0] < 0)
		return xstrdup("(unknown version)");
	return xasprintf("%d.%d.%d", v[0], v[1], v[2]);
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
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Why cc failed, and the fix, from its exit status. */
static void report_cc(const char *cc, int st, const char *c,
		      const char *incdir, const char *log)
{
	if (st == 127)
		md_error("type provider: cannot run the C compiler '%s' (see "
			 "%s): install one (apt-get install gcc) or set CC",
			 cc, log);
	else
		md_error("type provider: %s -g -c %s failed against the Open "
			 "MPI headers in %s (compiler output in %s): they are "
			 "not the headers of an Open MPI 4.x this provider "
			 "knows; set MD_OMPI_INCDIR to the include folder of "
			 "the job's Open MPI",
			 cc, c, incdir, log);
}

/* Write the sources into dir (a fresh folder) and compile them into
 * obj; work files stay in dir. */
static int compile_provider(const char *incdir, const char *dir,
			    const char *obj)
{
	char *inc = xasprintf("%s/inc/ompi/peruse", dir);
	char *peruse = xasprintf("%s/peruse.h", inc);
	char *c = xasprintf("%s/ompi_types.c", dir);
	char *i1 = xasprintf("-I%s/inc", dir);
	char *i2 = xasprintf("-I%s/openmpi", incdir);
	char *i3 = xasprintf("-I%s", incdir);
	char *log = xasprintf("%s/cc.log", dir);
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char *argv[] = { (char *)cc, (char *)"-g", (char *)"-c", (char *)"-o",
			 (char *)obj, c, i1, i2, i3, NULL };
	int ret = mkdir_p(inc), st;

	if (!ret)
		ret = write_file(peruse, md_embed_peruse_h,
				 md_embed_peruse_h_len);
	if (!ret)
		ret = write_file(c, md_embed_ompi_types_c,
				 md_embed_ompi_types_c_len);
	if (!ret && (st = run_cc(argv, log)) != 0) {
		report_cc(cc, st, c, incdir, log);
		ret = -MD_E_NOTYPES;
	}
	free(inc);
	free(peruse);
	free(c);
	free(i1);
	free(i2);
	free(i3);
	free(log);
	return ret;
}

static int build_in(const char *incdir, const char *cache, const char *final)
{
	char *work = xasprintf("%s/build-XXXXXX", cache), *obj = NULL;
	int ret = mkdir_p(cache);

	if (!ret && !mkdtemp(work)) {
		md_error("mkdtemp(%s): %s", work, strerror(errno));
		ret = -MD_E_SYS;
	}
	if (!ret) {
		obj = xasprintf("%s/ompi_types.o", work);
		ret = compile_provider(incdir, work, obj);
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
	int ret = 0;

	*obj_path = *how = NULL;
	if (!incdir)
		incdir = getenv("MD_OMPI_INCDIR") && *getenv("MD_OMPI_INCDIR")
				 ? getenv("MD_OMPI_INCDIR") : DT_OMPI_INCDIR;
	hdr = xasprintf("%s/openmpi/ompi_config.h", incdir);
	if (!is_file(hdr)) {
		md_error("type provider: no Open MPI headers: %s is not there; "
			 "install them (apt-get install libopenmpi-dev) or set "
			 "MD_OMPI_INCDIR to the include folder of the job's "
			 "Open MPI",
			 hdr);
		free(hdr);
		return -MD_E_NOTYPES;
	}
	h = fnv_provider(h);
	h = fnv_headers(fnv(h, incdir, strlen(incdir)), incdir);
	cache = cache_dir ? xstrdup(cache_dir) : default_cache_dir();
	final = xasprintf("%s/ompi-types-%016llx.o", cache,
			  (unsigned long long)h);
	if (!is_file(final))
		ret = build_in(incdir, cache, final);
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
	free(hdr);
	return ret;
}

int dt_index_open_mpi(const char *libmpi_path, const char *cache_dir,
		      struct dt_index **out)
{
	char *obj = NULL, *how = NULL;
	int ret = dt_index_open(libmpi_path, out, NULL);

	if (ret != -MD_E_NOTYPES)
		return ret;
	md_info("%s has no DWARF and no separate debug file under %s: "
		"using the type provider", libmpi_path, DF_DEBUG_ROOT);
	ret = dt_provider_build(cache_dir, NULL, &obj, &how);
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
