/*
 * runtrack.c - how `run` loads the interposition library (libmdtrack.so)
 * into every rank: through the launcher's own way of passing environment
 * to ranks, on every host.
 *
 * Open MPI 4.1: `mpirun -x LD_PRELOAD=...` inserted after the launcher's
 * name.  Not OMPI_MCA_mca_base_env_list: mpirun refuses a job that sets
 * it and also uses -x ("does not support mixing these two methods").
 * MPICH's hydra: `-genv LD_PRELOAD ...`, with the library built against
 * MPICH's mpi.h (lib/mpi-deadlock/mpich/).  A command that is not a known
 * launcher (a script, `sh -c`, `time mpirun`) gets LD_PRELOAD in its
 * environment: mpirun forks its local ranks with its own environment, so
 * they load it; ranks on other hosts do not (README: use mpirun -x).
 * Processes that are not MPI programs load it harmlessly (its PMPI
 * references are weak).
 */
#include "run.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "md.h"

#define RT_LIB "lib/mpi-deadlock/libmdtrack.so"
#define RT_LIB_MPICH "lib/mpi-deadlock/mpich/libmdtrack.so"

static char *rt_find(const char *env_name, const char *rel)
{
	const char *env = getenv(env_name);
	char exe[PATH_MAX], *slash, *p;
	ssize_t n;

	if (env && *env)
		return access(env, R_OK) == 0 ? xstrdup(env) : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	/* Installed: PREFIX/bin/../lib; built: build/lib beside the binary. */
	p = xasprintf("%s/../%s", exe, rel);
	if (access(p, R_OK) == 0) {
		char *real = realpath(p, NULL);

		if (real) {
			free(p);
			return real;
		}
		return p;
	}
	free(p);
	p = xasprintf("%s/%s", exe, rel);
	if (access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* MPICH's handles are integers, Open MPI's pointers: a library built
 * against one mpi.h misreads the other's requests (MPI_Startall's array),
 * so Hydra's jobs get the build against MPICH's. */
char *rt_library(const char *cmd)
{
	if (rt_launcher_of(cmd) == RT_HYDRA)
		return rt_find("MD_TRACK_LIB_MPICH", RT_LIB_MPICH);
	return rt_find("MD_TRACK_LIB", RT_LIB);
}

/* The real file behind a command name (PATH searched), or NULL. */
static char *rt_resolve(const char *cmd)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, *full, *real = NULL;

	if (strchr(cmd, '/'))
		return realpath(cmd, NULL);
	if (!path)
		return NULL;
	dirs = xstrdup(path);
	for (dir = strtok_r(dirs, ":", &save); dir && !real;
	     dir = strtok_r(NULL, ":", &save)) {
		full = xasprintf("%s/%s", *dir ? dir : ".", cmd);
		if (access(full, X_OK) == 0)
			real = realpath(full, NULL);
		free(full);
	}
	free(dirs);
	return real;
}

enum rt_launcher rt_launcher_of(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	char *real = rt_resolve(cmd);
	const char *rbase;
	enum rt_launcher l = RT_OTHER;
	enum col_mpi mpi;

	base = base ? base + 1 : cmd;
	if (!real)
		return RT_OTHER;
	rbase = strrchr(real, '/');
	rbase = rbase ? rbase + 1 : real;
	mpi = col_launcher_mpi(rbase);
	if (mpi == COL_MPI_OPENMPI || strstr(rbase, "openmpi"))
		l = RT_OPENMPI;
	else if (mpi == COL_MPI_HYDRA || strstr(rbase, "hydra") ||
		 strstr(rbase, "mpich"))
		l = RT_HYDRA;
	/* A launcher name whose file says nothing: Open MPI's by default
	 * only when its directory says so. */
	else if (col_launcher_mpi(base) == COL_MPI_EITHER &&
		 strstr(real, "openmpi"))
		l = RT_OPENMPI;
	free(real);
	return l;
}

char **rt_job_argv(char *const *argv, const char *lib, char **env_preload)
{
	const char *old = getenv("LD_PRELOAD");
	char *value = old && *old ? xasprintf("%s:%s", lib, old)
				  : xstrdup(lib);
	enum rt_launcher l = rt_launcher_of(argv[0]);
	int n = 0, k = 1, extra = l == RT_OPENMPI ? 2 : l == RT_HYDRA ? 3 : 0;
	char **out;

	while (argv[n])
		n++;
	out = xcalloc((size_t)(n + extra + 1), sizeof(*out));
	out[0] = xstrdup(argv[0]);
	if (l == RT_OPENMPI) {
		out[k++] = xstrdup("-x");
		out[k++] = xasprintf("LD_PRELOAD=%s", value);
	} else if (l == RT_HYDRA) {
		out[k++] = xstrdup("-genv");
		out[k++] = xstrdup("LD_PRELOAD");
		out[k++] = xstrdup(value);
	}
	for (int i = 1; i < n; i++)
		out[k++] = xstrdup(argv[i]);
	if (l == RT_OTHER) {
		*env_preload = value;
	} else {
		*env_preload = NULL;
		free(value);
	}
	return out;
}

void rt_argv_free(char **argv)
{
	if (!argv)
		return;
	for (int i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}
