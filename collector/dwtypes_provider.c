/*
 * dwtypes_provider.c - the Open MPI type provider (part of dwtypes): for a
 * libmpi without DWARF and without a debug file, compile
 * collector/typeprov/ompi_types.c with -g against the installed Open MPI
 * headers, once, into a cache folder, and read the layouts from that
 * object's DWARF.
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

static bool provider_in(const char *dir)
{
	char *c = xasprintf("%s/ompi_types.c", dir);
	char *h = xasprintf("%s/peruse.h", dir);
	bool ok = is_file(c) && is_file(h);

	free(c);
	free(h);
	return ok;
}

/* The folder holding ompi_types.c and peruse.h, or NULL. */
static char *provider_dir(void)
{
	const char *env = getenv("MD_TYPEPROV_DIR");
	char exe[PATH_MAX], *slash, *dir;
	ssize_t n;

	if (env && *env)
		return provider_in(env) ? xstrdup(env) : NULL;
#ifdef MD_TYPEPROV_DIR
	if (provider_in(MD_TYPEPROV_DIR))
		return xstrdup(MD_TYPEPROV_DIR);
#endif
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	dir = xasprintf("%s/../share/mpi-deadlock", exe);
	if (provider_in(dir))
		return dir;
	free(dir);
	dir = xasprintf("%s/../collector/typeprov", exe);
	if (provider_in(dir))
		return dir;
	free(dir);
	return NULL;
}

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

static uint64_t fnv_file(uint64_t h, const char *dir, const char *name)
{
	char buf[8192], *path = xasprintf("%s/%s", dir, name);
	size_t n;
	FILE *f = fopen(path, "r");

	free(path);
	if (!f)
		return h;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		h = fnv(h, buf, n);
	fclose(f);
	return h;
}

/* A changed provider source is a new object. */
static uint64_t fnv_provider(uint64_t h, const char *src)
{
	return fnv_file(fnv_file(h, src, "ompi_types.c"), src, "peruse.h");
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

static int copy_file(const char *from, const char *to)
{
	char buf[8192];
	size_t n;
	FILE *in = fopen(from, "r"), *out = in ? fopen(to, "w") : NULL;
	int ret = 0;

	if (!in || !out) {
		md_error("copying %s to %s: %s", from, to, strerror(errno));
		ret = -MD_E_SYS;
	}
	while (!ret && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ret = -MD_E_SYS;
	if (out && fclose(out) != 0 && !ret) {
		md_error("writing %s: %s", to, strerror(errno));
		ret = -MD_E_SYS;
	}
	if (in)
		fclose(in);
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

/* Compile into dir/out.o; work files stay in dir (a fresh folder). */
static int compile_provider(const char *src, const char *incdir,
			    const char *dir, const char *obj)
{
	char *inc = xasprintf("%s/inc/ompi/peruse", dir);
	char *peruse_to = xasprintf("%s/peruse.h", inc);
	char *peruse_from = xasprintf("%s/peruse.h", src);
	char *c = xasprintf("%s/ompi_types.c", src);
	char *i1 = xasprintf("-I%s/inc", dir);
	char *i2 = xasprintf("-I%s/openmpi", incdir);
	char *i3 = xasprintf("-I%s", incdir);
	char *log = xasprintf("%s/cc.log", dir);
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char *argv[] = { (char *)cc, (char *)"-g", (char *)"-c", (char *)"-o",
			 (char *)obj, c, i1, i2, i3, NULL };
	int ret = mkdir_p(inc);

	if (!ret)
		ret = copy_file(peruse_from, peruse_to);
	if (!ret && run_cc(argv, log) != 0) {
		md_error("%s -g -c %s %s %s %s failed (output in %s): the Open "
			 "MPI headers in %s do not compile; install "
			 "libopenmpi-dev or the MPI's debug symbols", cc, c, i1,
			 i2, i3, log, incdir);
		ret = -MD_E_NOTYPES;
	}
	free(inc);
	free(peruse_to);
	free(peruse_from);
	free(c);
	free(i1);
	free(i2);
	free(i3);
	free(log);
	return ret;
}

static int build_in(const char *src, const char *incdir, const char *cache,
		    const char *final)
{
	char *work = xasprintf("%s/build-XXXXXX", cache), *obj = NULL;
	int ret = mkdir_p(cache);

	if (!ret && !mkdtemp(work)) {
		md_error("mkdtemp(%s): %s", work, strerror(errno));
		ret = -MD_E_SYS;
	}
	if (!ret) {
		obj = xasprintf("%s/ompi_types.o", work);
		ret = compile_provider(src, incdir, work, obj);
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
	char *src = provider_dir(), *cache, *final, *version, *hdr;
	uint64_t h = 0xcbf29ce484222325ULL;
	int ret = 0;

	*obj_path = *how = NULL;
	if (!incdir)
		incdir = getenv("MD_OMPI_INCDIR") && *getenv("MD_OMPI_INCDIR")
				 ? getenv("MD_OMPI_INCDIR") : DT_OMPI_INCDIR;
	hdr = xasprintf("%s/openmpi/ompi_config.h", incdir);
	if (!src || !is_file(hdr)) {
		if (!src)
			md_error("type provider: ompi_types.c and peruse.h not "
				 "found in $MD_TYPEPROV_DIR, <exe>/../share/"
				 "mpi-deadlock or <exe>/../collector/typeprov;"
				 " reinstall mpi-deadlock");
		else
			md_error("type provider: no Open MPI headers (%s); "
				 "install libopenmpi-dev or set MD_OMPI_INCDIR",
				 hdr);
		free(src);
		free(hdr);
		return -MD_E_NOTYPES;
	}
	h = fnv_provider(h, src);
	h = fnv_headers(fnv(h, incdir, strlen(incdir)), incdir);
	cache = cache_dir ? xstrdup(cache_dir) : default_cache_dir();
	final = xasprintf("%s/ompi-types-%016llx.o", cache,
			  (unsigned long long)h);
	if (!is_file(final))
		ret = build_in(src, incdir, cache, final);
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
	free(src);
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
			md_error("type provider %s has no DWARF: was it "
				 "compiled without -g?", obj);
	}
	if (!ret) {
		dt_index_set_source(*out, how);
	} else {
		md_error("no type information for %s, so no message queues: "
			 "install its debug symbols (a debug file under %s, by "
			 "build-id or .gnu_debuglink), or the Open MPI "
			 "development headers (libopenmpi-dev) for the type "
			 "provider, or use an Open MPI built with -g",
			 libmpi_path, DF_DEBUG_ROOT);
		ret = -MD_E_NOTYPES;
	}
	free(obj);
	free(how);
	return ret;
}
