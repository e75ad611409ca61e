/*
 * md.h - what every module of mpi-deadlock shares: the error codes,
 * allocation that never fails, and message helpers.
 */
#ifndef MD_MD_H
#define MD_MD_H

#include <stdarg.h>
#include <stddef.h>

#define MD_VERSION "0.1.0"

/* Exit codes: an interface, documented in --help and README. */
enum {
	MD_EXIT_NO_DEADLOCK = 0,
	MD_EXIT_DEADLOCK = 1,
	MD_EXIT_INCOMPLETE = 2,
	MD_EXIT_ERROR = 3,
	MD_EXIT_USAGE = 64,
};

/*
 * The error codes, written once.  Fallible functions return 0 or a
 * negated code (-MD_E_GONE) and report the failure themselves, once,
 * where it is found; callers pass the code up without printing again.
 */
#define MD_ERRORS(X)                                                      \
	X(OK, "success")                                                  \
	X(GONE, "process exited")                                         \
	X(PERM, "permission denied")                                      \
	X(NOSUCH, "no such process")                                      \
	X(NOTMPI, "not an MPI starter or rank")                           \
	X(NOTREADY, "MPI job not started yet")                            \
	X(FAULT, "address unreadable")                                    \
	X(NOSYM, "symbol not found")                                      \
	X(NOTYPES, "no type information")                                 \
	X(DLL, "message-queue DLL unusable")                              \
	X(INPUT, "bad input")                                             \
	X(INTR, "interrupted")                                            \
	X(SYS, "system call failed")

enum md_err {
#define MD_ERR_ENUM(name, text) MD_E_##name,
	MD_ERRORS(MD_ERR_ENUM)
#undef MD_ERR_ENUM
	MD_E_COUNT
};

/* Text for a code, positive or negated; never NULL. */
const char *md_strerror(int code);

/* Allocation that ends the program on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Ask for transparent huge pages over the 2 MiB-aligned part of a big
 * block (a million ranks' arrays): a fault per 2 MiB, not per 4 KiB.
 * Only advice: nothing happens where the kernel does not offer it. */
void md_huge_pages(void *p, size_t n);
/*
 * For a program's main(), before it allocates (never in library code: it
 * sets the process's allocator): a freed big buffer (a million ranks'
 * arrays, ELF and DWARF sections) stays in the heap for the next one
 * instead of going back to the system and being faulted in again, which
 * costs more than the work on a virtual machine.
 */
void md_malloc_tune(void);
char *xstrndup(const char *s, size_t n);
/* asprintf that ends the program on failure. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Messages to stderr, prefixed with "mpi-deadlock: ".  md_error is for a
 * failure (one line naming the call, the ids and the fix), md_warn for
 * something the user should know, md_info only when verbose.
 */
void md_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void md_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void md_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void md_set_verbose(int verbose);
int md_verbose(void);

/*
 * The user's cache of mpi-deadlock ($XDG_CACHE_HOME/mpi-deadlock, else
 * ~/.cache/mpi-deadlock; caller frees): compiled type providers, the
 * source-line memos.
 */
char *md_cache_dir(void);
/* mkdir -p; returns 0 or -MD_E_SYS with errno set (not reported). */
int md_mkdir_p(const char *path);

/* Monotonic time in nanoseconds. */
long long md_now_ns(void);

/* The value of hex digit c (0-9, a-f, A-F), or -1. */
static inline int md_hex_digit(unsigned char c)
{
	unsigned d = (unsigned)c - '0';

	if (d <= 9)
		return (int)d;
	d = ((unsigned)c | 0x20) - 'a';
	return d < 6 ? (int)d + 10 : -1;
}

#endif /* MD_MD_H */
