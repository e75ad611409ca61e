/* util.c - allocation, messages and error texts shared by every module. */
#include "md.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

static const char *const md_err_text[] = {
#define MD_ERR_TEXT(name, text) [MD_E_##name] = text,
	MD_ERRORS(MD_ERR_TEXT)
#undef MD_ERR_TEXT
};

/* The one global outside main: verbosity is set once from the command
 * line before anything runs and only read after. */
static int md_verbosity;

const char *md_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code >= MD_E_COUNT)
		return "unknown error";
	return md_err_text[code];
}

static void oom(size_t n)
{
	fprintf(stderr, "mpi-deadlock: out of memory allocating %zu bytes\n", n);
	abort();
}

/* A buffer this big asks for huge pages (md_huge_pages). */
#define HUGE_MIN (4 << 20)

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	if (n >= HUGE_MIN)
		md_huge_pages(p, n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	if (n * size >= HUGE_MIN)
		md_huge_pages(p, n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	if (n >= HUGE_MIN)
		md_huge_pages(q, n);
	return q;
}

void md_huge_pages(void *p, size_t n)
{
	const uintptr_t huge = 2 << 20;
	uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t end = ((uintptr_t)p + n) & ~(huge - 1);

	if (end > start)
		madvise((void *)start, end - start, MADV_HUGEPAGE);
}

void md_malloc_tune(void)
{
	/* 32 MiB is glibc's largest mmap threshold; bigger buffers ask
	 * for huge pages (md_huge_pages). */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s ? s : "");
	if (!p)
		oom(strlen(s));
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom(n);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom(0);
	va_end(ap);
	return p;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	char buf[4096];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "mpi-deadlock: %s%s\n", kind, buf);
}

void md_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void md_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void md_info(const char *fmt, ...)
{
	va_list ap;

	if (!md_verbosity)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void md_set_verbose(int verbose)
{
	md_verbosity = verbose;
}

int md_verbose(void)
{
	return md_verbosity;
}

long long md_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

char *md_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (xdg && *xdg)
		return xasprintf("%s/mpi-deadlock", xdg);
	if (home && *home)
		return xasprintf("%s/.cache/mpi-deadlock", home);
	return xstrdup("/var/cache/mpi-deadlock/types");
}

int md_mkdir_p(const char *path)
{
	char *p = xstrdup(path), *s;
	int ret = 0, err;

	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			ret = -MD_E_SYS;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	err = errno;
	free(p);
	errno = err;
	return ret;
}
