/* target_test.c - the target module on forked children and on the fake. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../collector/target.h"
#include "md.h"
#include "support/tracee.h"

static struct tgt *attach_or_fail(int pid)
{
	struct tgt *t = NULL;
	int r = tgt_attach(pid, &t);

	cr_assert_eq(r, 0, "tgt_attach(%d): %s", pid, md_strerror(r));
	return t;
}

Test(target, attach_reads_variable_and_child_runs_again_after_detach)
{
	struct tr_child c;
	uint64_t v = 0;
	struct tgt *t;

	cr_assert_eq(tr_child_start(&c, 2), 0);
	t = attach_or_fail(c.pid);
	cr_expect(tgt_is_attached(t));
	cr_expect_eq(tgt_read(t, c.magic_addr, &v, sizeof(v)), 0);
	cr_expect_eq(v, TR_MAGIC);
	/* Stopped: a ping stays unanswered while attached. */
	cr_expect_eq(tr_child_ping(&c, 300), -1);
	tgt_detach(t);
	cr_expect(!tgt_is_attached(t));
	/* It answers the earlier ping first, then this one. */
	cr_expect_geq(tr_child_ping(&c, 5000), 0, "child did not run again");
	tgt_free(t);
	tr_child_end(&c);
}

Test(target, attach_lists_every_thread_of_the_child)
{
	struct tr_child c;
	const int *tids;
	int n = 0;
	struct tgt *t;
	bool main_seen = false;

	cr_assert_eq(tr_child_start(&c, 3), 0);
	t = attach_or_fail(c.pid);
	cr_assert_eq(tgt_threads(t, &tids, &n), 0);
	cr_expect_eq(n, 4, "threads: %d", n);
	for (int i = 0; i < n; i++)
		main_seen |= tids[i] == c.pid;
	cr_expect(main_seen);
	tgt_free(t);
	cr_expect_geq(tr_child_ping(&c, 5000), 0);
	tr_child_end(&c);
}

Test(target, read_of_unmapped_address_is_a_quiet_fault)
{
	struct tr_child c;
	struct tr_capture cap;
	uint64_t v;
	struct tgt *t;
	char *err;
	int r1, r2;

	cr_assert_eq(tr_child_start(&c, 0), 0);
	t = attach_or_fail(c.pid);
	tr_stderr_begin(&cap);
	r1 = tgt_read(t, 8, &v, sizeof(v));
	r2 = tgt_read(t, 0xffffffff00000000ULL, &v, sizeof(v));
	err = tr_stderr_end(&cap);
	cr_expect_eq(r1, -MD_E_FAULT);
	cr_expect_eq(r2, -MD_E_FAULT);
	cr_expect_str_empty(err);
	free(err);
	tgt_free(t);
	tr_child_end(&c);
}

Test(target, open_reads_memory_without_stopping)
{
	struct tr_child c;
	uint64_t v = 0;
	struct tgt *t = NULL;

	cr_assert_eq(tr_child_start(&c, 0), 0);
	cr_assert_eq(tgt_open(c.pid, &t), 0);
	cr_expect(!tgt_is_attached(t));
	cr_expect_eq(tgt_read(t, c.magic_addr, &v, sizeof(v)), 0);
	cr_expect_eq(v, TR_MAGIC);
	cr_expect_geq(tr_child_ping(&c, 5000), 0, "an opened child must run");
	cr_expect_not_null(strstr(tgt_maps_text(t), "[stack]"));
	tgt_free(t);
	tr_child_end(&c);
}

Test(target, exe_is_the_test_binary_for_a_forked_child)
{
	struct tr_child c;
	struct tgt *t = NULL;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	cr_assert_gt(n, 0);
	self[n] = '\0';
	cr_assert_eq(tr_child_start(&c, 0), 0);
	cr_assert_eq(tgt_open(c.pid, &t), 0);
	cr_expect_str_eq(tgt_exe(t), self);
	cr_expect_eq(tgt_pid(t), c.pid);
	tgt_free(t);
	tr_child_end(&c);
}

Test(target, attach_fails_cleanly_when_pid_is_gone)
{
	struct tr_capture cap;
	struct tgt *t = NULL;
	char *err, want[64];
	pid_t pid;
	int r;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	tr_stderr_begin(&cap);
	r = tgt_attach(pid, &t);
	err = tr_stderr_end(&cap);
	cr_expect_eq(r, -MD_E_NOSUCH);
	cr_expect_null(t);
	snprintf(want, sizeof(want), "no process with pid %d", pid);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	free(err);
}

/* A second process seizes the child and stays its tracer. */
static pid_t start_tracer(pid_t victim)
{
	int p[2];
	char ok = 0;
	pid_t tracer;

	cr_assert_eq(pipe(p), 0);
	fflush(NULL);
	tracer = fork();
	cr_assert_geq(tracer, 0);
	if (tracer == 0) {
		if (ptrace(PTRACE_SEIZE, victim, NULL, NULL) == 0)
			ok = 1;
		if (write(p[1], &ok, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &ok, 1), 1);
	close(p[0]);
	cr_assert_eq(ok, 1, "the helper could not seize the child");
	return tracer;
}

Test(target, attach_fails_with_perm_naming_the_tracer_when_already_traced)
{
	struct tr_child c;
	struct tr_capture cap;
	struct tgt *t = NULL;
	char *err, want[64];
	pid_t tracer;
	int r;

	cr_assert_eq(tr_child_start(&c, 1), 0);
	tracer = start_tracer(c.pid);
	tr_stderr_begin(&cap);
	r = tgt_attach(c.pid, &t);
	err = tr_stderr_end(&cap);
	kill(tracer, SIGKILL);
	waitpid(tracer, NULL, 0);
	cr_expect_eq(r, -MD_E_PERM);
	cr_expect_null(t);
	snprintf(want, sizeof(want), "already traced by pid %d", tracer);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	cr_expect_not_null(strstr(err, "PTRACE_SEIZE"), "stderr: %s", err);
	free(err);
	/* Nothing of ours is left on the child: it still runs. */
	cr_expect_geq(tr_child_ping(&c, 5000), 0);
	tr_child_end(&c);
}

Test(target, signal_sent_during_attach_is_not_lost)
{
	struct tr_child c;
	struct tgt *t;
	int got = -1;

	cr_assert_eq(tr_child_start(&c, 1), 0);
	/* Likely still pending when we stop the child: then it comes back
	 * as a signal-delivery-stop that detach must re-inject. */
	kill(c.pid, SIGUSR1);
	t = attach_or_fail(c.pid);
	tgt_free(t);
	for (int i = 0; i < 50 && got < 1; i++)
		got = tr_child_ping(&c, 5000);
	cr_expect_eq(got, 1, "SIGUSR1 handled %d times", got);
	tr_child_end(&c);
}

Test(target, attach_twice_in_a_row_works)
{
	struct tr_child c;
	struct tgt *t;

	cr_assert_eq(tr_child_start(&c, 1), 0);
	for (int i = 0; i < 3; i++) {
		t = attach_or_fail(c.pid);
		tgt_free(t);
	}
	cr_expect_geq(tr_child_ping(&c, 5000), 0);
	tr_child_end(&c);
}

Test(target, fake_reads_regions_and_faults_outside)
{
	struct tgt *t = tgt_fake_new(77);
	char a[8] = "abcdefg", b[8] = "hijklmn", buf[16] = { 0 };

	tgt_fake_add_region(t, 0x1000, a, 8);
	tgt_fake_add_region(t, 0x1008, b, 8);
	cr_expect_eq(tgt_read(t, 0x1004, buf, 8), 0);
	cr_expect_arr_eq(buf, "efg\0hijk", 8);
	cr_expect_eq(tgt_read(t, 0x100c, buf, 8), -MD_E_FAULT);
	cr_expect_eq(tgt_read(t, 0xfff, buf, 1), -MD_E_FAULT);
	cr_expect_eq(tgt_pid(t), 77);
	cr_expect(!tgt_is_attached(t));
	tgt_fake_gone(t);
	cr_expect_eq(tgt_read(t, 0x1000, buf, 1), -MD_E_GONE);
	tgt_free(t);
}

Test(target, stopped_process_pages_are_read_once_until_forget)
{
	struct tgt *t = tgt_fake_new_attached(78);
	static unsigned char page[2 * 4096];
	uint64_t v = 0, w = 0;

	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (unsigned char)i;
	tgt_fake_add_region(t, 0x10000, page, sizeof(page));
	cr_assert_eq(tgt_read(t, 0x10ffc, &v, sizeof(v)), 0, "across pages");
	cr_expect_eq(memcmp(&v, page + 0xffc, sizeof(v)), 0);
	/* Both pages are kept: the process "exits", they still answer. */
	tgt_fake_gone(t);
	cr_expect_eq(tgt_read(t, 0x10010, &w, sizeof(w)), 0);
	cr_expect_eq(memcmp(&w, page + 0x10, sizeof(w)), 0);
	cr_expect_eq(tgt_read(t, 0x11ff8, &w, sizeof(w)), 0);
	cr_expect_eq(memcmp(&w, page + 0x1ff8, sizeof(w)), 0);
	tgt_forget(t);
	cr_expect_eq(tgt_read(t, 0x10010, &w, sizeof(w)), -MD_E_GONE,
		     "tgt_forget dropped the pages: the read is asked again");
	tgt_free(t);
}

Test(target, stopped_process_reads_short_regions_and_faults_outside)
{
	struct tgt *t = tgt_fake_new_attached(79);
	char a[8] = "abcdefg", b[8] = "hijklmn", buf[16] = { 0 };

	/* Regions shorter than a page: the page cannot be read whole, the
	 * read itself is asked. */
	tgt_fake_add_region(t, 0x1000, a, 8);
	tgt_fake_add_region(t, 0x1008, b, 8);
	cr_expect_eq(tgt_read(t, 0x1004, buf, 8), 0);
	cr_expect_arr_eq(buf, "efg\0hijk", 8);
	cr_expect_eq(tgt_read(t, 0x100c, buf, 8), -MD_E_FAULT);
	cr_expect_eq(tgt_read(t, 0xfff, buf, 1), -MD_E_FAULT);
	cr_expect_eq(tgt_read(t, 0x5000, buf, 8), -MD_E_FAULT);
	tgt_free(t);
}

Test(target, read_str_stops_at_nul_and_cuts_at_max)
{
	struct tgt *t = tgt_fake_new(1);
	char *s = NULL;

	tgt_fake_add_region(t, 0x2000, "hello\0world", 12);
	cr_assert_eq(tgt_read_str(t, 0x2000, 64, &s), 0);
	cr_expect_str_eq(s, "hello");
	free(s);
	cr_assert_eq(tgt_read_str(t, 0x2000, 4, &s), 0);
	cr_expect_str_eq(s, "hel");
	free(s);
	/* "world" ends with the region: the NUL is the last byte. */
	cr_assert_eq(tgt_read_str(t, 0x2006, 64, &s), 0);
	cr_expect_str_eq(s, "world");
	free(s);
	cr_expect_eq(tgt_read_str(t, 0x3000, 64, &s), -MD_E_FAULT);
	tgt_free(t);
}

Test(target, fake_gives_maps_threads_and_exe)
{
	struct tgt *t = tgt_fake_new(5);
	int tids[] = { 5, 6 };
	const int *got;
	int n;

	tgt_fake_set_maps(t, "00400000-00401000 r-xp 0 08:01 1 /bin/x\n");
	tgt_fake_set_threads(t, tids, 2);
	tgt_fake_set_exe(t, "/bin/x");
	cr_expect_str_eq(tgt_maps_text(t),
			 "00400000-00401000 r-xp 0 08:01 1 /bin/x\n");
	cr_assert_eq(tgt_threads(t, &got, &n), 0);
	cr_expect_eq(n, 2);
	cr_expect_eq(got[1], 6);
	cr_expect_str_eq(tgt_exe(t), "/bin/x");
	tgt_free(t);
}

Test(target, proc_parent_names_our_parent)
{
	char comm[TGT_COMM_MAX];
	int ppid = 0;

	cr_assert_eq(tgt_proc_parent(getpid(), &ppid, comm), 0);
	cr_expect_eq(ppid, getppid());
	cr_expect_eq(tgt_proc_parent(-5, &ppid, comm), -MD_E_NOSUCH);
}

Test(target, attach_gives_up_on_a_thread_that_cannot_stop, .timeout = 30)
{
	struct tr_capture cap;
	struct tgt *t = NULL;
	char *err, want[64];
	long long t0;
	pid_t pid;
	int r;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* A vfork parent sleeps unstoppably until the child execs or
		 * exits: a stand-in for a thread in uninterruptible sleep. */
		if (vfork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		_exit(0);
	}
	usleep(200 * 1000);
	tr_stderr_begin(&cap);
	t0 = md_now_ns();
	r = tgt_attach(pid, &t);
	err = tr_stderr_end(&cap);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, __WALL);
	cr_expect_eq(r, -MD_E_SYS);
	cr_expect_null(t);
	cr_expect_lt(md_now_ns() - t0, 8LL * 1000 * 1000 * 1000);
	snprintf(want, sizeof(want), "thread %d of pid %d did not stop", pid,
		 pid);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	free(err);
}

Test(target, attach_to_unreaped_exited_process_is_gone_not_stuck)
{
	struct tgt *t = NULL;
	char path[64], buf[256] = "";
	pid_t pid = fork();
	int status, i;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	/* Not reaped yet: a zombie, as a killed rank is until mpirun
	 * collects it. */
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 200; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		if (strstr(buf, ") Z"))
			break;
		usleep(10000);
	}
	cr_assert(strstr(buf, ") Z"), "child never became a zombie: %s", buf);
	cr_assert_eq(tgt_attach(pid, &t), -MD_E_GONE);
	cr_assert_null(t);
	waitpid(pid, &status, 0);
}

Test(target, access_to_another_users_process_is_perm_naming_the_owner)
{
	pid_t parent = getpid(), pid;
	int status;

	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		FILE *f = tmpfile();
		char err[512] = "";
		size_t n;
		int r;

		/* Become nobody, then look at the root-owned test process. */
		if (!f || setgid(65534) || setuid(65534))
			_exit(10);
		dup2(fileno(f), 2);
		r = tgt_check_access(parent);
		fflush(stderr);
		rewind(f);
		n = fread(err, 1, sizeof(err) - 1, f);
		err[n] = '\0';
		if (r != -MD_E_PERM)
			_exit(11);
		_exit(strstr(err, "belongs to uid 0") ? 0 : 12);
	}
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status), "child died");
	cr_assert_eq(WEXITSTATUS(status), 0, "child said %d", WEXITSTATUS(status));
}

Test(target, perm_reason_explains_yama_ptrace_scope)
{
	char path[] = "/tmp/md-yama-XXXXXX", why[256];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "1\n", 2), 2);
	close(fd);
	/* Our own process: no tracer, same user; the scope decides. */
	tgt_perm_reason(getpid(), path, why, sizeof(why));
	cr_expect(strstr(why, "ptrace_scope is 1"), "reason: %s", why);
	cr_expect(strstr(why, "kernel.yama.ptrace_scope=0"), "reason: %s", why);
	fd = open(path, O_WRONLY | O_TRUNC);
	cr_assert_eq(write(fd, "3\n", 2), 2);
	close(fd);
	tgt_perm_reason(getpid(), path, why, sizeof(why));
	cr_expect(strstr(why, "disabled until reboot"), "reason: %s", why);
	unlink(path);
}

/* ---- a thread that does not stop ---- */

struct vfork_thread {
	int release_fd;		/* read end: the vfork child waits on it */
};

/* A vfork parent sleeps unstoppably (TASK_KILLABLE, not interruptible by
 * PTRACE_INTERRUPT) until its child execs or exits: a real stand-in for a
 * thread in uninterruptible sleep.  The child exits when told. */
static void *vfork_thread_main(void *arg)
{
	struct vfork_thread *vt = arg;
	char b;

	if (vfork() == 0) {
		while (read(vt->release_fd, &b, 1) < 0)
			;
		_exit(0);
	}
	for (;;)
		pause();
	return NULL;
}

/* The thread of pid other than pid itself, 0 if none yet. */
static int other_thread(int pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int tid = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir)))
		if (atoi(d->d_name) > 0 && atoi(d->d_name) != pid)
			tid = atoi(d->d_name);
	if (dir)
		closedir(dir);
	return tid;
}

static long tracer_of(int pid, int tid)
{
	char path[96], line[256];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			v = atol(line + 10);
	if (f)
		fclose(f);
	return v;
}

Test(target, thread_that_does_not_stop_is_named_and_let_go_once_it_stops,
     .timeout = 60)
{
	int release[2], tid = 0;
	const int *tids, *un;
	int n = 0, nun = 0, r;
	struct tr_capture cap;
	struct tgt *t = NULL;
	char *err, want[96];
	pid_t pid;

	cr_assert_eq(pipe(release), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		static struct vfork_thread vt;
		pthread_t th;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		vt.release_fd = release[0];
		pthread_create(&th, NULL, vfork_thread_main, &vt);
		for (;;)
			pause();
	}
	for (int i = 0; i < 200 && !tid; i++) {
		usleep(10000);
		tid = other_thread(pid);
	}
	cr_assert_gt(tid, 0);
	usleep(200 * 1000);	/* let it reach vfork */
	tr_stderr_begin(&cap);
	r = tgt_attach(pid, &t);
	err = tr_stderr_end(&cap);
	cr_assert_eq(r, 0, "attach: %s; stderr: %s", md_strerror(r), err);
	cr_assert_eq(tgt_threads(t, &tids, &n), 0);
	cr_expect_eq(n, 1, "only the main thread stopped");
	cr_expect_eq(tids[0], pid);
	tgt_unstopped(t, &un, &nun);
	cr_assert_eq(nun, 1);
	cr_expect_eq(un[0], tid);
	snprintf(want, sizeof(want), "thread %d of pid %d did not stop", tid,
		 pid);
	cr_expect_not_null(strstr(err, want), "stderr: %s", err);
	free(err);
	/* Detached: the main thread is let go; the other stays ours until
	 * it stops. */
	tgt_detach(t);
	cr_expect_eq(tracer_of(pid, pid), 0);
	tgt_unstopped(t, &un, &nun);
	cr_expect_eq(nun, 1);
	cr_expect_eq(tracer_of(pid, tid), getpid());
	/* The vfork child exits: the thread wakes, stops, and is let go. */
	cr_assert_eq(write(release[1], "x", 1), 1);
	for (int i = 0; i < 500 && nun; i++) {
		usleep(10000);
		tgt_detach(t);
		tgt_unstopped(t, &un, &nun);
	}
	cr_expect_eq(nun, 0, "the thread was let go once it stopped");
	cr_expect_eq(tracer_of(pid, tid), 0);
	tgt_free(t);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(release[0]);
	close(release[1]);
}

Test(target, attach_of_many_processes_waits_for_their_stops_together,
     .timeout = 60)
{
	struct tr_child c[3];
	struct tgt *t[3];
	long long t0;

	for (int i = 0; i < 3; i++)
		cr_assert_eq(tr_child_start(&c[i], 2), 0);
	t0 = md_now_ns();
	for (int i = 0; i < 3; i++)
		cr_assert_eq(tgt_attach_start(c[i].pid, &t[i]), 0);
	for (int i = 0; i < 3; i++) {
		const int *tids;
		int n = 0;

		cr_assert_eq(tgt_attach_wait(t[i], t0 + TGT_STOP_TIMEOUT_NS),
			     0);
		cr_assert_eq(tgt_threads(t[i], &tids, &n), 0);
		cr_expect_eq(n, 3);
	}
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(tr_child_ping(&c[i], 200), -1, "stopped");
		tgt_free(t[i]);
	}
	for (int i = 0; i < 3; i++) {
		cr_expect_geq(tr_child_ping(&c[i], 5000), 0, "runs again");
		tr_child_end(&c[i]);
	}
}

Test(target, fake_with_a_thread_not_stopped_lists_it_until_detached)
{
	struct tgt *t = tgt_fake_new_attached(7);
	int stopped[] = { 7 }, stuck[] = { 8 };
	const int *tids;
	int n = 0;

	tgt_fake_set_threads(t, stopped, 1);
	tgt_fake_set_unstopped(t, stuck, 1);
	cr_assert_eq(tgt_threads(t, &tids, &n), 0);
	cr_expect_eq(n, 1);
	tgt_unstopped(t, &tids, &n);
	cr_expect_eq(n, 1);
	cr_expect_eq(tids[0], 8);
	tgt_detach(t);
	cr_expect(!tgt_is_attached(t));
	cr_expect_eq(tgt_fake_detaches(t), 1);
	tgt_unstopped(t, &tids, &n);
	cr_expect_eq(n, 0);
	tgt_free(t);
}

Test(target, fake_attached_twice_shows_tracing_stop_until_both_let_go)
{
	struct tgt *p = tgt_fake_new(80), *a = NULL, *b = NULL, *r = NULL;
	struct tgt_stat st;
	uint64_t v = 42, w = 0;

	tgt_fake_set_stat(p, 'S', 1, "app");
	tgt_fake_add_region(p, 0x1000, &v, sizeof(v));
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	cr_assert_eq(tgt_fake_attach(p, &b), 0);
	cr_assert_eq(tgt_fake_open(p, &r), 0);
	cr_expect(tgt_is_attached(a) && !tgt_is_attached(r));
	cr_expect_eq(tgt_read(r, 0x1000, &w, sizeof(w)), 0, "shared memory");
	cr_expect_eq(w, 42);
	cr_assert_eq(tgt_stat(r, &st), 0);
	cr_expect_eq(st.state, 't');
	/* Stopped by someone else while traced: stopped once let go. */
	tgt_fake_set_stat(p, 'T', 1, "app");
	tgt_free(a);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 't', "b still attached");
	tgt_free(b);
	tgt_free(r);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'T');
	cr_expect_eq(tgt_fake_attaches(p), 2);
	cr_expect_eq(tgt_fake_detaches(p), 2, "the read-only one is no attach");
	tgt_free(p);
}

Test(target, fake_gone_between_the_halves_of_an_attach_is_let_go)
{
	struct tgt *p = tgt_fake_new(81), *a = NULL;

	tgt_fake_set_stat(p, 'S', 1, "app");
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	tgt_fake_gone(p);
	cr_expect_eq(tgt_attach_wait(a, md_now_ns()), -MD_E_GONE);
	cr_expect(!tgt_is_attached(a));
	cr_expect_eq(tgt_fake_detaches(p), tgt_fake_attaches(p));
	tgt_free(a);
	cr_expect_eq(tgt_fake_detaches(p), 1, "let go once");
	cr_expect_eq(tgt_fake_attach(p, &a), -MD_E_GONE);
	cr_expect_null(a);
	cr_expect_eq(tgt_fake_open(p, &a), -MD_E_NOSUCH);
	tgt_free(p);
}

/* The fake's job-control state under the tool's attach and detach, as
 * the kernel's: what the tests of the collector on fakes rely on. */
Test(target, fake_keeps_a_stop_by_someone_else_through_attach_and_detach)
{
	struct tgt *p = tgt_fake_new(82), *a = NULL;
	struct tgt_stat st;

	tgt_fake_set_stat(p, 'S', 1, "app");
	/* Running: running again once let go, and no group-stop seen. */
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	cr_assert_eq(tgt_attach_wait(a, md_now_ns()), 0);
	cr_expect_eq(tgt_stopped_by(a), 0);
	tgt_free(a);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'S');
	/* SIGSTOP between the seize and the wait: taken by the tracer,
	 * given back at the detach, so the process stops. */
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	tgt_fake_kill(p, SIGSTOP);
	cr_assert_eq(tgt_attach_wait(a, md_now_ns()), 0);
	cr_expect_eq(tgt_stopped_by(a), 0, "a signal-delivery-stop");
	tgt_free(a);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'T');
	/* Stopped before the attach: a group-stop, still in effect after. */
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	cr_assert_eq(tgt_attach_wait(a, md_now_ns()), 0);
	cr_expect_eq(tgt_stopped_by(a), SIGSTOP);
	tgt_free(a);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'T');
	tgt_fake_kill(p, SIGCONT);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'S');
	/* SIGSTOP while in our stop: it acts once the process is let go. */
	cr_assert_eq(tgt_fake_attach(p, &a), 0);
	cr_assert_eq(tgt_attach_wait(a, md_now_ns()), 0);
	tgt_fake_kill(p, SIGSTOP);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 't');
	tgt_free(a);
	cr_assert_eq(tgt_stat(p, &st), 0);
	cr_expect_eq(st.state, 'T');
	tgt_free(p);
}
