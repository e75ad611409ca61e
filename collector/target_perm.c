/*
 * target_perm.c - why ptrace or a memory read was refused, as one line
 * naming the fix (strace's attach diagnostics).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "md.h"
#include "target_int.h"

/* Whether we hold CAP_SYS_PTRACE (bit 19 of CapEff). */
static bool has_cap_sys_ptrace(void)
{
	char *text = tgt_slurp("/proc/self/status"), *p;
	unsigned long long eff = 0;

	if (!text)
		return false;
	p = strstr(text, "\nCapEff:");
	if (p)
		eff = strtoull(p + 8, NULL, 16);
	free(text);
	return eff & (1ULL << 19);
}

static void perm_reason(int pid, char *buf, size_t len)
{
	tgt_perm_reason(pid, "/proc/sys/kernel/yama/ptrace_scope", buf, len);
}

void tgt_perm_reason(int pid, const char *yama_path, char *buf, size_t len)
{
	char comm[TGT_COMM_MAX] = "?", *yama;
	long tracer = tgt_status_field(pid, "TracerPid");
	long uid = tgt_status_field(pid, "Uid");
	int scope = -1, ppid;

	if (tracer > 0) {
		tgt_proc_parent((int)tracer, &ppid, comm);
		snprintf(buf, len,
			 "already traced by pid %ld (%s): detach that debugger first",
			 tracer, comm);
		return;
	}
	if (uid >= 0 && (uid_t)uid != geteuid() && geteuid() != 0) {
		snprintf(buf, len,
			 "pid %d belongs to uid %ld, we are uid %d: run as that user or as root",
			 pid, uid, (int)geteuid());
		return;
	}
	yama = tgt_slurp(yama_path);
	if (yama)
		scope = atoi(yama);
	free(yama);
	if (scope == 1 || scope == 2)
		snprintf(buf, len,
			 "kernel.yama.ptrace_scope is %d: set kernel.yama.ptrace_scope=0 or run as root",
			 scope);
	else if (scope == 3)
		snprintf(buf, len,
			 "kernel.yama.ptrace_scope is 3: ptrace is disabled until reboot");
	else if (has_cap_sys_ptrace())
		snprintf(buf, len,
			 "the kernel refused (process not dumpable, in another "
			 "user namespace, or a security module)");
	else
		snprintf(buf, len,
			 "no CAP_SYS_PTRACE (in a container? give it SYS_PTRACE)");
}

void tgt_perm_report(int pid, const char *call, int saved_errno)
{
	char why[256];

	perm_reason(pid, why, sizeof(why));
	md_error("%s: %s: %s", call, strerror(saved_errno), why);
}

int tgt_check_access(int pid)
{
	char path[64], why[256], call[96];
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == ENOENT || err == ESRCH) {
		md_error("no process with pid %d", pid);
		return -MD_E_NOSUCH;
	}
	perm_reason(pid, why, sizeof(why));
	snprintf(call, sizeof(call), "open %s", path);
	md_error("%s: %s: %s", call, strerror(err), why);
	return -MD_E_PERM;
}
