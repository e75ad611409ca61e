/*
 * target_proc.c - what /proc says of processes and threads, quietly, for
 * the live target and for the callers that look at a pid without
 * attaching (the walk to the starter, the run command's children).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md.h"
#include "target_int.h"

char *tgt_slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t r;
	int saved;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	saved = errno;
	close(fd);
	if (r < 0) {
		free(buf);
		errno = saved;
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

bool tgt_pid_exists(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return pid > 0 && access(path, F_OK) == 0;
}

int tgt_proc_stat(int pid, struct tgt_stat *st)
{
	char path[64], *text, *open_paren, *close_paren;
	size_t len;
	int r = -MD_E_NOSUCH;

	if (pid <= 0)
		return -MD_E_NOSUCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	text = tgt_slurp(path);
	if (!text)
		return -MD_E_NOSUCH;
	/* comm may hold spaces and parentheses: it ends at the LAST ')';
	 * then come state (3), ppid (4) ... starttime (22). */
	open_paren = strchr(text, '(');
	close_paren = strrchr(text, ')');
	if (open_paren && close_paren && close_paren > open_paren &&
	    sscanf(close_paren + 1,
		   " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %*d %*d %llu", &st->state, &st->ppid,
		   &st->start) == 3) {
		len = (size_t)(close_paren - open_paren - 1);
		if (len >= TGT_COMM_MAX)
			len = TGT_COMM_MAX - 1;
		memcpy(st->comm, open_paren + 1, len);
		st->comm[len] = '\0';
		r = 0;
	}
	free(text);
	return r;
}

int tgt_proc_parent(int pid, int *ppid, char comm[TGT_COMM_MAX])
{
	struct tgt_stat st;
	int r = tgt_proc_stat(pid, &st);

	if (r == 0) {
		*ppid = st.ppid;
		memcpy(comm, st.comm, TGT_COMM_MAX);
	}
	return r;
}

int tgt_proc_strings(int pid, const char *which, char **text, size_t *len)
{
	char path[64];
	size_t n = 0, cap = 4096;
	char *buf;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, which);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -MD_E_NOSUCH : -MD_E_PERM;
	buf = xmalloc(cap + 1);
	while ((got = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)got;
		if (n == cap)
			buf = xrealloc(buf, (cap *= 2) + 1);
	}
	close(fd);
	if (got < 0) {
		free(buf);
		return -MD_E_PERM;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

int tgt_proc_exe(int pid, char **out)
{
	char path[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ENOENT ? -MD_E_NOSUCH : -MD_E_PERM;
	buf[n] = '\0';
	*out = xstrdup(buf);
	return 0;
}

/*
 * The children of pid, from every /proc/N/stat: /proc/PID/task/TID/
 * children lists only one thread's and needs CONFIG_PROC_CHILDREN.
 */
int tgt_proc_children(int pid, int **pids, int *n)
{
	DIR *dir = opendir("/proc");
	struct tgt_stat st;
	struct dirent *d;
	int cap = 16, cnt = 0;

	if (!tgt_pid_exists(pid) || !dir) {
		if (dir)
			closedir(dir);
		return -MD_E_NOSUCH;
	}
	*pids = xmalloc((size_t)cap * sizeof(**pids));
	while ((d = readdir(dir))) {
		int p;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		p = atoi(d->d_name);
		if (tgt_proc_stat(p, &st) < 0 || st.ppid != pid)
			continue;
		if (cnt == cap)
			*pids = xrealloc(*pids, (size_t)(cap *= 2) *
							sizeof(**pids));
		(*pids)[cnt++] = p;
	}
	closedir(dir);
	*n = cnt;
	return 0;
}

long tgt_status_field(int pid, const char *key)
{
	char path[64], *text, *p;
	size_t klen = strlen(key);
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	text = tgt_slurp(path);
	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			v = strtol(p + klen + 1, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

long tgt_tracer_of(int pid, int tid)
{
	char path[96], *text, *p;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	text = tgt_slurp(path);
	if (!text)
		return -1;
	p = strstr(text, "\nTracerPid:");
	if (p)
		v = strtol(p + 11, NULL, 10);
	free(text);
	return v;
}

int tgt_proc_tids(int pid, int **tids, int *n)
{
	char path[64];
	struct dirent *de;
	int cap = 16, cnt = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -MD_E_GONE : -MD_E_SYS;
	*tids = xmalloc((size_t)cap * sizeof(**tids));
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (cnt == cap)
			*tids = xrealloc(*tids, (size_t)(cap *= 2) *
						       sizeof(**tids));
		(*tids)[cnt++] = atoi(de->d_name);
	}
	closedir(d);
	*n = cnt;
	return 0;
}
