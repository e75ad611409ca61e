/* elf_fixture.c - real ELF files for the symbol and DWARF tests. */
#include "support/elf_fixture.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "md.h"

char *ef_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	char *dir = xasprintf("%s/md-elf-XXXXXX", t && *t ? t : "/tmp");

	if (!mkdtemp(dir))
		cr_assert_fail("mkdtemp(%s) failed", dir);
	return dir;
}

void ef_rmtree(char *dir)
{
	if (!dir)
		return;
	/* Only folders made by ef_tmpdir, so the pattern guards rm -rf. */
	if (strstr(dir, "/md-elf-"))
		ef_sh("rm -rf '%s'", dir);
	free(dir);
}

char *ef_write(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	if (!f)
		cr_assert_fail("fopen(%s) failed", path);
	fputs(text, f);
	fclose(f);
	return path;
}

char *ef_cc(const char *dir, const char *out, const char *src,
	    const char *flags, const char *extra)
{
	char *cname = xasprintf("%s.c", out);
	char *cpath = ef_write(dir, cname, src);
	char *opath = xasprintf("%s/%s", dir, out);
	int st = ef_sh("cc %s -o '%s' '%s' %s", flags, opath, cpath,
		       extra ? extra : "");

	free(cname);
	free(cpath);
	if (st != 0) {
		free(opath);
		return NULL;
	}
	return opath;
}

static char *vfmt(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

int ef_sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd;
	int st;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	st = system(cmd);
	free(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

char *ef_output(const char *fmt, ...)
{
	va_list ap;
	char *cmd, *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *p;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	free(cmd);
	if (!p)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 65536;
			buf = xrealloc(buf, cap);
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		len += n;
	} while (n > 0);
	buf[len] = '\0';
	if (pclose(p) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int ef_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

const char *ef_ompi_g_prefix(void)
{
	const char *p = getenv("MD_OMPI_G");
	char stamp[4096];

	if (!p || !*p)
		p = "/var/cache/mpi-deadlock/openmpi-4.1.4-g";
	snprintf(stamp, sizeof(stamp), "%s/.mpi-deadlock-built", p);
	return ef_exists(stamp) ? p : NULL;
}
