/*
 * target.h - access to one traced process: the ONLY module that touches
 * ptrace, /proc and tracee memory.  Everything above it (proctable, the
 * MQD DLL host, stacks) sees a struct tgt and its small ops table, which
 * has a live implementation (target.c) and a fake one for tests
 * (target_fake.c), as elfutils' Dwfl_Thread_Callbacks or libunwind's
 * _UPT/_UCD accessors.
 *
 * Safety: nothing here installs signal handlers or kills anything; a
 * process attached with tgt_attach() is running again after tgt_detach()
 * or tgt_free(), whatever happened in between.
 */
#ifndef MD_TARGET_H
#define MD_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tgt;

/*
 * The accessors of one implementation.  Each returns 0 or a negated
 * MD_E_* code; reporting follows the tgt_* function that calls it.
 * Strings and arrays returned through out-parameters are heap-allocated
 * and become the caller's (struct tgt caches them).
 */
struct tgt_ops {
	int (*read)(struct tgt *t, uint64_t addr, void *buf, size_t len);
	int (*maps)(struct tgt *t, char **text);
	int (*threads)(struct tgt *t, int **tids, int *n);
	int (*exe)(struct tgt *t, char **path);
	/* Detach if attached; must be idempotent. */
	void (*detach)(struct tgt *t);
	/* Free the implementation's data (after detach). */
	void (*release)(struct tgt *t);
};

/*
 * Open pid for memory reads only, without stopping it (for mpirun).
 * Returns 0 and *out, or -MD_E_NOSUCH ("no process with pid N",
 * reported).  Permission problems show on the first read.
 */
int tgt_open(int pid, struct tgt **out);

/*
 * Stop every thread of pid with PTRACE_SEIZE + PTRACE_INTERRUPT, looping
 * over /proc/PID/task until no new thread appears, and wait until each is
 * stopped: a consistent view.  Threads that exit meanwhile are dropped.
 * A real signal that arrives while stopping is kept and re-injected by
 * tgt_detach().  Returns 0 and *out (attached), or, with nothing left
 * attached: -MD_E_NOSUCH (no such pid), -MD_E_GONE (exited while
 * attaching), -MD_E_PERM (one line naming the fix: Yama ptrace_scope,
 * other uid, already traced by pid N (comm), missing CAP_SYS_PTRACE),
 * -MD_E_SYS.  All reported.
 */
int tgt_attach(int pid, struct tgt **out);

/*
 * Let every thread run again exactly as before (pending signals
 * re-injected).  Idempotent; does nothing for an opened or fake target.
 */
void tgt_detach(struct tgt *t);

/* Detach if needed and free; tgt_free(NULL) does nothing. */
void tgt_free(struct tgt *t);

/*
 * Read len bytes at addr: process_vm_readv, falling back to
 * PTRACE_PEEKDATA when attached.  Returns 0, or quietly -MD_E_FAULT
 * (unmapped or unreadable: the DLL probes such addresses) or -MD_E_GONE
 * (the process exited); -MD_E_PERM is diagnosed and reported once per
 * target; other errors -MD_E_SYS (reported).
 */
int tgt_read(struct tgt *t, uint64_t addr, void *buf, size_t len);

/*
 * Read a NUL-terminated string of at most max-1 bytes at addr into a new
 * heap string (*out, the caller's).  Returns as tgt_read(); a string
 * without NUL within max bytes is cut.
 */
int tgt_read_str(struct tgt *t, uint64_t addr, size_t max, char **out);

/*
 * The /proc/PID/maps text.  Borrowed: valid until tgt_free(t).  NULL when
 * it could not be read (reported).
 */
const char *tgt_maps_text(struct tgt *t);

/*
 * The thread ids: for an attached target the threads stopped, else those
 * listed in /proc/PID/task now.  *tids is borrowed: valid until
 * tgt_free, and for an unattached target until the next tgt_threads.
 * Returns 0 or a negated code (reported; -MD_E_GONE quietly).
 */
int tgt_threads(struct tgt *t, const int **tids, int *n);

/* readlink /proc/PID/exe; borrowed until tgt_free, NULL if unknown. */
const char *tgt_exe(struct tgt *t);

int tgt_pid(const struct tgt *t);
bool tgt_is_attached(const struct tgt *t);

/*
 * For implementations: wrap ops and their private data into a target
 * (tgt_free calls ops->detach then ops->release), and get the data back.
 */
struct tgt *tgt_new(int pid, const struct tgt_ops *ops, void *impl,
		    bool attached);
void *tgt_impl(const struct tgt *t);

/*
 * About other processes, by pid, without attaching (proctable's walk to
 * the starter).  Quiet: they return -MD_E_NOSUCH when the pid does not
 * exist and let the caller say what it means.
 */
#define TGT_COMM_MAX 64
/* Parent pid and command name (comm) from /proc/PID/stat. */
/*
 * Can this process read pid's memory map (and so its memory)?  Returns 0,
 * or -MD_E_NOSUCH / -MD_E_PERM after reporting one line that says why
 * (other user, Yama ptrace_scope, missing CAP_SYS_PTRACE) and the fix.
 */
int tgt_check_access(int pid);

/* What /proc/PID/stat says of a process. */
struct tgt_stat {
	char state;			/* 'R', 'S', 'Z', ... */
	int ppid;
	unsigned long long start;	/* start time, clock ticks after boot */
	char comm[TGT_COMM_MAX];
};

/* Read it: 0, or -MD_E_NOSUCH (quietly) when pid is gone. */
int tgt_proc_stat(int pid, struct tgt_stat *st);

/*
 * Why ptrace or a memory read of pid was refused, as a reason naming the
 * fix, into buf: a tracer already attached, another user, the Yama
 * ptrace_scope read from yama_path (the real one is
 * /proc/sys/kernel/yama/ptrace_scope), or a missing capability.
 */
void tgt_perm_reason(int pid, const char *yama_path, char *buf, size_t len);

int tgt_proc_parent(int pid, int *ppid, char comm[TGT_COMM_MAX]);
/*
 * /proc/PID/<which> for a file of NUL-separated strings ("environ",
 * "cmdline"): *text (heap, the caller's, NUL-terminated after the last
 * byte) holds *len bytes.  Quiet: -MD_E_NOSUCH, -MD_E_PERM.
 */
int tgt_proc_strings(int pid, const char *which, char **text, size_t *len);
/* readlink /proc/PID/exe into a new heap string (*out). */
int tgt_proc_exe(int pid, char **out);

/*
 * The fake target for tests (target_fake.c): memory regions, maps text,
 * threads and exe given by the test.  Reads outside the regions give
 * -MD_E_FAULT; tgt_fake_gone() makes every later read answer -MD_E_GONE.
 */
struct tgt *tgt_fake_new(int pid);
/* Copy len bytes of data to appear at addr. */
void tgt_fake_add_region(struct tgt *t, uint64_t addr, const void *data,
			 size_t len);
void tgt_fake_set_maps(struct tgt *t, const char *text);
void tgt_fake_set_threads(struct tgt *t, const int *tids, int n);
void tgt_fake_set_exe(struct tgt *t, const char *path);
void tgt_fake_gone(struct tgt *t);

#endif /* MD_TARGET_H */
