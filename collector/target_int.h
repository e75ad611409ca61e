/*
 * target_int.h - what the files of the target module share: the /proc
 * helpers for the live implementation and the permission diagnosis.
 * Only collector/target*.c include it.
 */
#ifndef MD_TARGET_INT_H
#define MD_TARGET_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"

/* A whole /proc file as a new heap string, NULL (errno kept) if not. */
char *tgt_slurp(const char *path);

/* Whether /proc/PID exists. */
bool tgt_pid_exists(int pid);

/* The thread ids in /proc/PID/task now: 0, -MD_E_GONE or -MD_E_SYS. */
int tgt_proc_tids(int pid, int **tids, int *n);

/* A "Key:\tvalue" field of /proc/PID/status as a number, -1 if absent. */
long tgt_status_field(int pid, const char *key);

/* Which process traces thread tid (TracerPid), 0 if none, -1 if gone. */
long tgt_tracer_of(int pid, int tid);

/*
 * Report a refused call on t once per target: "call: strerror: why",
 * with the reason of tgt_perm_reason.  t may be NULL (pid 0).
 */
void tgt_report_perm(struct tgt *t, const char *call, int saved_errno);
/* The same line for pid, every time (target_perm.c). */
void tgt_perm_report(int pid, const char *call, int saved_errno);

/*
 * The pages of a stopped process (target_cache.c): tgt_cache_read reads
 * through ops->read a whole page at a time, keeps the pages, and answers
 * the next reads from them; a read longer than two pages, or one that
 * touches a page that cannot be read whole, goes to ops->read as asked
 * (its error is that of ops->read).  tgt_cache_free(NULL) does nothing.
 */
struct tgt_cache;
struct tgt_cache *tgt_cache_new(void);
int tgt_cache_read(struct tgt_cache *c, struct tgt *t,
		   const struct tgt_ops *ops, uint64_t addr, void *buf,
		   size_t len);
void tgt_cache_free(struct tgt_cache *c);

/*
 * What a stop that waitpid reported (status) means at the detach, for
 * the live target and the fake alike: *resume_sig is the signal to give
 * back (that of a signal-delivery-stop: a SIGSTOP from someone else that
 * the tracer took there stops the process only if given back; a
 * PTRACE_EVENT_STOP gives none, the kernel would ignore it); *job_sig is
 * the signal of the group-stop the process was in (a PTRACE_EVENT_STOP
 * with a stop signal; our PTRACE_INTERRUPT's is SIGTRAP), or 0.
 */
void tgt_stop_signals(int status, int *resume_sig, int *job_sig);

/* The live implementation (target_live.c). */
int tgt_live_open(int pid, struct tgt **out);

#endif /* MD_TARGET_INT_H */
