/*
 * target.h - access to one traced process: the ONLY module that touches
 * ptrace, /proc and tracee memory.  Everything above it (proctable, the
 * MQD DLL host, stacks) sees a struct tgt and its small ops table, which
 * has a live implementation (target_live.c, over /proc helpers in
 * target_proc.c and the permission reasons of target_perm.c) and a fake
 * one for tests (target_fake.c), as elfutils' Dwfl_Thread_Callbacks or
 * libunwind's _UPT/_UCD accessors; target.c wraps the ops and caches.
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
/*
 * What /proc/PID/stat says of a process.
 */
#define TGT_COMM_MAX 64
struct tgt_stat {
	char state;			/* 'R', 'S', 'Z', ... */
	int ppid;
	unsigned long long start;	/* start time, clock ticks after boot */
	char comm[TGT_COMM_MAX];
};

/*
 * A thread's general registers in libunwind's numbering (which is the
 * DWARF numbering on x86-64: rax 0 ... r15 15, rip 16; on AArch64 x0-x30
 * 0-30, sp 31, pc 32).
 */
#define TGT_NREGS 33
#if defined(__x86_64__)
#define TGT_REG_SP 7
#define TGT_REG_PC 16
#elif defined(__aarch64__)
#define TGT_REG_SP 31
#define TGT_REG_PC 32
#endif
struct tgt_regs {
	uint64_t r[TGT_NREGS];
};

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
	/* Registers of stopped thread tid (the unwinder's start). */
	int (*regs)(struct tgt *t, int tid, struct tgt_regs *out);
	/* State, parent and comm of the process (the walk to the starter). */
	int (*stat)(struct tgt *t, struct tgt_stat *st);
	/* Its child processes (the search for mpirun under a wrapper). */
	int (*children)(struct tgt *t, int **pids, int *n);
	/* Its environment, NAME=VALUE strings each ended by a NUL (the
	 * ranks of a launcher without an MPIR table, proctable_hydra.c). */
	int (*environ)(struct tgt *t, char **text, size_t *len);
	/* Open another process of the same system for reads (a parent or
	 * a child), as tgt_open does; -MD_E_NOSUCH quietly. */
	int (*open_other)(struct tgt *t, int pid, struct tgt **out);
	/* Detach if attached; must be idempotent. */
	void (*detach)(struct tgt *t);
	/* Optional (NULL: none): the value of an auxiliary vector entry
	 * (AT_BASE, ...); -MD_E_NOSYM when absent. */
	int (*auxv)(struct tgt *t, uint64_t type, uint64_t *val);
	/* Free the implementation's data (after detach). */
	void (*release)(struct tgt *t);
	/* Optional (NULL: the target was made stopped whole): the second
	 * half of an attach, as tgt_attach_wait. */
	int (*attach_wait)(struct tgt *t, long long deadline);
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
 * tgt_attach in two halves, so that many processes stop in parallel:
 * tgt_attach_start seizes and interrupts every thread of pid without
 * waiting (returns 0 and *out, or the codes of tgt_attach with nothing
 * left attached, reported); tgt_attach_wait then waits, until deadline
 * (md_now_ns() time), for their stops, seizing threads that appeared
 * meanwhile.  A thread that does not stop by the deadline (uninterruptible
 * sleep) does not fail the attach: the others are attached and it is
 * listed by tgt_unstopped.  tgt_attach_wait returns 0, or -MD_E_GONE /
 * -MD_E_SYS (reported; nothing left attached but unstopped threads).
 */
int tgt_attach_start(int pid, struct tgt **out);
int tgt_attach_wait(struct tgt *t, long long deadline);

/*
 * The threads seized that have not stopped (borrowed until the next
 * tgt_attach_wait, tgt_detach or tgt_free).  They stay traced until they
 * stop and tgt_detach is called again, or until this process exits.
 */
void tgt_unstopped(struct tgt *t, const int **tids, int *n);

/*
 * The signal that held the process stopped when it was attached
 * (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: stopped by someone else, and left
 * stopped on detach), or 0.  Known after tgt_attach_wait.
 */
int tgt_stopped_by(const struct tgt *t);

/* How long tgt_attach waits for the threads to stop. */
#define TGT_STOP_TIMEOUT_NS (5LL * 1000 * 1000 * 1000)

/*
 * Let every thread run again exactly as before (pending signals
 * re-injected).  A thread that has not stopped yet is checked again and
 * detached if it stopped meanwhile, else left for a later call (see
 * tgt_unstopped).  Idempotent; does nothing for an opened target.
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
 * While every thread of t is stopped, tgt_read reads whole pages once
 * and answers later reads from them (the memory cannot change); they are
 * dropped at tgt_detach, or by tgt_forget when the caller is done with
 * the process for now (their memory: a few dozen pages per process).
 */
void tgt_forget(struct tgt *t);

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

/*
 * The value of entry type (AT_BASE: where ld.so is loaded) of the
 * process's auxiliary vector.  Returns 0, or quietly -MD_E_NOSYM (no
 * such entry, or a target that has no vector) or the /proc error.
 */
int tgt_auxv(struct tgt *t, uint64_t type, uint64_t *val);

/* readlink /proc/PID/exe; borrowed until tgt_free, NULL if unknown. */
const char *tgt_exe(struct tgt *t);

/*
 * Registers of thread tid of an attached target (a tid of tgt_threads).
 * Returns 0, or quietly -MD_E_GONE (the thread exited) or -MD_E_SYS.
 */
int tgt_regs(struct tgt *t, int tid, struct tgt_regs *out);

/* State, parent and comm of the process; quietly -MD_E_NOSUCH if gone. */
int tgt_stat(struct tgt *t, struct tgt_stat *st);

/*
 * The child processes of t, in a new heap array (*pids, the caller's).
 * Returns 0 or -MD_E_NOSUCH quietly.
 */
int tgt_children(struct tgt *t, int **pids, int *n);

/*
 * The value of environment variable name in t, in a new heap string
 * (*value, the caller's).  Returns 0, or quietly -MD_E_NOSUCH (not set,
 * or the process is gone) or -MD_E_PERM (not readable).
 */
int tgt_getenv(struct tgt *t, const char *name, char **value);

/*
 * Open process pid of the same system as t (its parent or a child) for
 * reads, as tgt_open; a fake target opens the fakes linked to it.
 * Returns 0 and *out, or -MD_E_NOSUCH quietly.
 */
int tgt_open_other(struct tgt *t, int pid, struct tgt **out);

int tgt_pid(const struct tgt *t);
bool tgt_is_attached(const struct tgt *t);

/*
 * For implementations: wrap ops and their private data into a target
 * (tgt_free calls ops->detach then ops->release), and get the data back.
 */
struct tgt *tgt_new(int pid, const struct tgt_ops *ops, void *impl,
		    bool attached);
void *tgt_impl(const struct tgt *t);
/* The implementation's threads that did not stop (copied). */
void tgt_set_unstopped(struct tgt *t, const int *tids, int n);
/* The signal of the group-stop the process was in, 0 if none. */
void tgt_set_stopped_by(struct tgt *t, int sig);
/* Attached or not, as the implementation finds it. */
void tgt_set_attached(struct tgt *t, bool attached);

/*
 * Fault injection for tests (inert unless called): every later tgt_read
 * of t answers code (a negated MD_E_*), as if the memory could not be
 * read.  0 turns it off.
 */
void tgt_inject_read_fault(struct tgt *t, int code);

/*
 * About other processes, by pid, without attaching (proctable's walk to
 * the starter).  Quiet: they return -MD_E_NOSUCH when the pid does not
 * exist and let the caller say what it means.
 */
/*
 * Can this process read pid's memory map (and so its memory)?  Returns 0,
 * or -MD_E_NOSUCH / -MD_E_PERM after reporting one line that says why
 * (other user, Yama ptrace_scope, missing CAP_SYS_PTRACE) and the fix.
 */
int tgt_check_access(int pid);

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
/* The child processes of pid (new heap array); -MD_E_NOSUCH quietly. */
int tgt_proc_children(int pid, int **pids, int *n);
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
/* Every later read answers code (a negated MD_E_*), the process stays. */
void tgt_fake_fail_reads(struct tgt *t, int code);
void tgt_fake_set_regs(struct tgt *t, int tid, const struct tgt_regs *r);
/* state 'T' is a process stopped by SIGSTOP (tgt_fake_kill). */
void tgt_fake_set_stat(struct tgt *t, char state, int ppid,
		       const char *comm);
/*
 * Someone else sends sig (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU or SIGCONT;
 * others are ignored) to fake t, with the kernel's effects: a stop
 * signal stops a process no one traces at once ('T' in tgt_stat); one
 * sent between tgt_fake_attach and tgt_attach_wait is reported there as
 * a signal-delivery-stop and stops the process after the detach only if
 * the detach gives it back; one sent while in the tool's stop acts once
 * the process is let go.  A group-stop stays through a detach.  SIGCONT
 * ends it and drops stop signals not acted on.
 */
void tgt_fake_kill(struct tgt *t, int sig);
/* Add "NAME=VALUE" to its environment (tgt_getenv). */
void tgt_fake_setenv(struct tgt *t, const char *assignment);
/*
 * Make other (another fake) the process with other's pid on t's system:
 * tgt_open_other(t, pid) opens it, and when it is t's parent (the ppid of
 * t's stat) or a child (other's ppid is t's pid), tgt_children lists it.
 * other is borrowed and must outlive t and what tgt_open_other opened.
 */
void tgt_fake_link(struct tgt *t, struct tgt *other);
/*
 * Fake attach: a fake made with tgt_fake_new_attached behaves as attached
 * (tgt_is_attached, tgt_detach) and counts its detaches; threads listed
 * with tgt_fake_set_unstopped did not stop.
 */
struct tgt *tgt_fake_new_attached(int pid);
int tgt_fake_detaches(const struct tgt *t);
/*
 * More targets on the process of fake t, sharing its memory, state and
 * counts (t, borrowed, must outlive them): tgt_fake_open opens it for
 * reads as tgt_open (-MD_E_NOSUCH once it is gone); tgt_fake_attach
 * attaches it as tgt_attach_start (-MD_E_GONE once it is gone; a fake
 * gone before tgt_attach_wait is let go there, -MD_E_GONE).  While a
 * target attached to it is not detached, tgt_stat says 't' (tracing
 * stop); then the state the test gave comes back ('T': stopped by
 * someone else, before or during the attach).  tgt_fake_attaches counts
 * the attaches, tgt_fake_new_attached's included.
 */
int tgt_fake_open(struct tgt *t, struct tgt **out);
int tgt_fake_attach(struct tgt *t, struct tgt **out);
int tgt_fake_attaches(const struct tgt *t);
void tgt_fake_set_unstopped(struct tgt *t, const int *tids, int n);

/*
 * Threads tids of fake t never stop: each tgt_attach_wait lists them as
 * unstopped (tgt_unstopped) until the detach.  And fn, when set, is told
 * of each tgt_attach_wait on t with its deadline, before it returns: the
 * order in which a caller waits for stops.
 */
void tgt_fake_set_stuck(struct tgt *t, const int *tids, int n);
typedef void (*tgt_fake_wait_fn)(void *ctx, struct tgt *t,
				 long long deadline);
void tgt_fake_on_wait(struct tgt *t, tgt_fake_wait_fn fn, void *ctx);

#endif /* MD_TARGET_H */
