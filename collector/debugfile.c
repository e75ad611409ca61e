/*
 * debugfile.c - separate debug files by build-id and .gnu_debuglink.
 */
#include "debugfile.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md.h"

struct df_elf {
	int fd;
	Elf *elf;
};

static int df_open(const char *path, struct df_elf *e, bool quiet)
{
	elf_version(EV_CURRENT);
	e->elf = NULL;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0) {
		if (!quiet)
			md_error("open(%s): %s", path, strerror(errno));
		return -MD_E_INPUT;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ_MMAP, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF) {
		if (!quiet)
			md_error("%s: not an ELF file (%s)", path,
				 elf_errmsg(-1));
		if (e->elf)
			elf_end(e->elf);
		close(e->fd);
		return -MD_E_INPUT;
	}
	return 0;
}

static void df_close(struct df_elf *e)
{
	elf_end(e->elf);
	close(e->fd);
}

static Elf_Scn *section_by_name(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

int df_has_debug_info(const char *path)
{
	struct df_elf e;
	GElf_Shdr sh;
	int ret = df_open(path, &e, false);

	if (ret)
		return ret;
	/* objcopy --only-keep-debug leaves SHT_NOBITS stubs of the code
	 * sections but keeps .debug_info as PROGBITS; strip --strip-debug
	 * removes it. */
	ret = section_by_name(e.elf, ".debug_info", &sh) &&
	      sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
	df_close(&e);
	return ret;
}

static char *hex(const unsigned char *p, size_t n)
{
	char *s = xmalloc(2 * n + 1);
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(s + 2 * i, "%02x", p[i]);
	s[2 * n] = '\0';
	return s;
}

static char *note_build_id(Elf_Data *data)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0)
			return hex((unsigned char *)data->d_buf + desc_off,
				   nh.n_descsz);
	}
	return NULL;
}

int df_build_id(const char *path, char **out)
{
	Elf_Scn *scn = NULL;
	struct df_elf e;
	char *id = NULL;
	int ret = df_open(path, &e, false);

	*out = NULL;
	if (ret)
		return ret;
	while (!id && (scn = elf_nextscn(e.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf)
			id = note_build_id(data);
	}
	df_close(&e);
	if (!id)
		return -MD_E_NOSYM;
	*out = id;
	return 0;
}

int df_debuglink(const char *path, char **name, uint32_t *crc)
{
	struct df_elf e;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t len;
	int ret = df_open(path, &e, true);

	*name = NULL;
	if (ret)
		return -MD_E_NOSYM;
	ret = -MD_E_NOSYM;
	scn = section_by_name(e.elf, ".gnu_debuglink", &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf)
		goto out;
	/* The name, NUL, padding to 4 bytes, then the CRC in the file's
	 * byte order (little-endian on the hosts we run on). */
	len = strnlen(data->d_buf, data->d_size);
	if (len == 0 || ((len + 4) & ~3UL) + 4 > data->d_size)
		goto out;
	memcpy(crc, (char *)data->d_buf + ((len + 4) & ~3UL), 4);
	*name = xstrndup(data->d_buf, len);
	ret = 0;
out:
	df_close(&e);
	return ret;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	size_t i;
	int k;

	crc = ~crc;
	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320U & -(crc & 1));
	}
	return ~crc;
}

int df_file_crc32(const char *path, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t c = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		md_error("open(%s): %s", path, strerror(errno));
		return -MD_E_INPUT;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32_update(c, buf, (size_t)n);
	close(fd);
	if (n < 0) {
		md_error("read(%s): %s", path, strerror(errno));
		return -MD_E_INPUT;
	}
	*crc = c;
	return 0;
}

/* A candidate is good when it is another file than the original and holds
 * the DWARF; by build-id the ids must match, by debuglink the CRC. */
static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

static bool has_dwarf_quiet(const char *path)
{
	struct df_elf e;
	GElf_Shdr sh;
	bool ok;

	if (df_open(path, &e, true))
		return false;
	ok = section_by_name(e.elf, ".debug_info", &sh) &&
	     sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
	df_close(&e);
	return ok;
}

static bool by_build_id(const char *root, const char *id, char **path)
{
	char *cand, *cand_id = NULL;
	bool ok;

	if (strlen(id) < 3)
		return false;
	cand = xasprintf("%s/.build-id/%.2s/%s.debug", root, id, id + 2);
	ok = access(cand, R_OK) == 0 && has_dwarf_quiet(cand);
	if (ok)
		ok = df_build_id(cand, &cand_id) == 0 &&
		     strcmp(cand_id, id) == 0;
	free(cand_id);
	if (!ok) {
		free(cand);
		return false;
	}
	*path = cand;
	return true;
}

static bool link_matches(const char *cand, const char *orig, uint32_t crc)
{
	uint32_t c;

	if (access(cand, R_OK) != 0 || same_file(cand, orig))
		return false;
	if (df_file_crc32(cand, &c) != 0)
		return false;
	if (c != crc) {
		md_info("%s: .gnu_debuglink CRC %08x does not match %08x of %s",
			orig, crc, c, cand);
		return false;
	}
	return has_dwarf_quiet(cand);
}

static bool by_debuglink(const char *orig, const char *root, char **path,
			 char **where)
{
	char real[PATH_MAX], *dir, *slash, *name = NULL, *cand[3];
	uint32_t crc;
	bool found = false;
	int i;

	if (df_debuglink(orig, &name, &crc) != 0)
		return false;
	if (!realpath(orig, real))
		snprintf(real, sizeof(real), "%s", orig);
	slash = strrchr(real, '/');
	dir = slash ? xstrndup(real, (size_t)(slash - real)) : xstrdup(".");
	cand[0] = xasprintf("%s/%s", dir, name);
	cand[1] = xasprintf("%s/.debug/%s", dir, name);
	cand[2] = xasprintf("%s%s/%s", root, dir, name);
	for (i = 0; i < 3; i++) {
		if (!found && link_matches(cand[i], orig, crc)) {
			found = true;
			*path = cand[i];
			*where = xasprintf(".gnu_debuglink %s, CRC %08x", name,
					   crc);
		} else {
			free(cand[i]);
		}
	}
	free(dir);
	free(name);
	return found;
}

int df_find(const char *elf_path, const char *debug_root, char **debug_path,
	    char **how)
{
	const char *root = debug_root ? debug_root : DF_DEBUG_ROOT;
	char *id = NULL, *path = NULL, *where = NULL;

	*debug_path = NULL;
	*how = NULL;
	if (df_build_id(elf_path, &id) == 0 && by_build_id(root, id, &path))
		where = xasprintf("build-id %s", id);
	else if (!by_debuglink(elf_path, root, &path, &where))
		path = NULL;
	free(id);
	if (!path)
		return -MD_E_NOTYPES;
	*how = xasprintf("separate debug file %s (by %s) for %s", path, where,
			 elf_path);
	*debug_path = path;
	free(where);
	return 0;
}
