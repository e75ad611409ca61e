/*
 * target_int.h - what the files of the target module share: the /proc
 * helpers for the live implementation and the permission diagnosis.
 * Only collector/target*.c include it.
 */
#ifndef MD_TARGET_INT_H
#define MD_TARGET_INT_H

#include <stdbool.h>

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

/* The live implementation (target_live.c). */
int tgt_live_open(int pid, struct tgt **out);

#endif /* MD_TARGET_INT_H */
