/*
 * gstack.c - `mpi-deadlock gstack PID`, run by Open MPI's daemons on
 * timeout with --get-stack-traces: once per local rank, one after another
 * (orted_comm.c popen()s "gstack PID" and relays its stdout line by line
 * to mpirun, which prints it).  One report per job is what a person
 * wants, so the first call analyses the whole job and the others point
 * at it.
 */
#include "gstack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "run.h"

#define GSTACK_PREFIX "mpi-deadlock-gstack."

static const char *gstack_dir(void)
{
	const char *d = getenv("XDG_RUNTIME_DIR");

	return d && *d ? d : "/tmp";
}

/*
 * Stamps of jobs that are gone would pile up: remove those whose starter
 * pid no longer exists or now names another process (start time).
 */
static void gstack_sweep(const char *dir)
{
	unsigned long long start, now;
	struct dirent *d;
	DIR *dp = opendir(dir);
	int pid;

	if (!dp)
		return;
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, GSTACK_PREFIX, strlen(GSTACK_PREFIX)) ||
		    sscanf(d->d_name + strlen(GSTACK_PREFIX), "%d.%llu", &pid,
			   &start) != 2)
			continue;
		if (!run_proc_stat(pid, NULL, &now) && now == start)
			continue;
		if (unlinkat(dirfd(dp), d->d_name, 0) == 0)
			md_info("removed stale %s/%s", dir, d->d_name);
	}
	closedir(dp);
}

/* A later call: find our rank in the stamp the first call wrote. */
static int gstack_later(const char *path, int pid)
{
	FILE *f = fopen(path, "r");
	int p, rank;

	while (f && fscanf(f, "%d %d", &p, &rank) == 2) {
		if (p == pid) {
			printf("rank %d (pid %d): see the report above\n", rank,
			       pid);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	printf("pid %d: see the report above\n", pid);
	return 0;
}

static void gstack_record(int fd, const struct snap *s)
{
	FILE *f = fdopen(dup(fd), "w");
	int i;

	if (!f)
		return;
	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].pid > 0)
			fprintf(f, "%d %d\n", s->ranks[i].pid, s->ranks[i].rank);
	fclose(f);
}

/* The first call: report on the whole job. */
static int gstack_first(const struct cli *c, int fd, int starter,
			const volatile sig_atomic_t *stop)
{
	struct snap *s = NULL;
	char *name;
	int rc;

	rc = cli_collect(c, starter, stop, &s);
	if (rc) {
		printf("mpi-deadlock: could not collect from the job of pid %d (starter %d): %s\n",
		       c->pid, starter, md_strerror(rc));
		return rc == -MD_E_INTR && *stop ? 128 + *stop : MD_EXIT_ERROR;
	}
	gstack_record(fd, s);
	name = xasprintf("mpirun --get-stack-traces (pid %d)", starter);
	rc = cli_emit(c, s, name, stdout);
	free(name);
	snap_free(s);
	return rc;
}

int gstack_main(const struct cli *c, const volatile sig_atomic_t *stop)
{
	unsigned long long start;
	const char *dir = gstack_dir();
	char *path;
	int starter, fd, rc;

	if (run_proc_stat(c->pid, &starter, NULL) ||
	    run_proc_stat(starter, NULL, &start)) {
		md_error("gstack %d: no such process (or its parent is gone)",
			 c->pid);
		return MD_EXIT_ERROR;
	}
	gstack_sweep(dir);
	path = xasprintf("%s/" GSTACK_PREFIX "%d.%llu", dir, starter, start);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 && errno == EEXIST) {
		rc = gstack_later(path, c->pid);
	} else if (fd < 0) {
		/* Without a stamp every call reports: noisy but not wrong. */
		md_warn("open(%s): %s; reporting for this rank anyway", path,
			strerror(errno));
		rc = gstack_first(c, -1, starter, stop);
	} else {
		rc = gstack_first(c, fd, starter, stop);
		close(fd);
	}
	free(path);
	return rc;
}
