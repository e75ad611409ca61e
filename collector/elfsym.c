/*
 * elfsym.c - ELF symbol index per file, an image cache shared by all the
 * ranks, and per-process views in dynamic-linker order (built from maps
 * text in elfsym_maps.c).
 */
#include "elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfsym_int.h"
#include "md.h"

#define uthash_malloc(sz) xmalloc(sz)
#define uthash_free(ptr, sz) free(ptr)
#include <uthash.h>

struct es_name {
	char *name;
	uint64_t value, size;
	enum es_kind kind;
	bool local;
	UT_hash_handle hh;
};

struct es_addr {
	uint64_t value, size;
	const char *name;	/* owned by an es_name */
	bool local;
};


/* File identity: a library replaced on disk between two looks is a new
 * image, one seen through two paths (symlinks) is the same. */
struct es_key {
	dev_t dev;
	ino_t ino;
	long long mtime_ns;
	off_t size;
};

struct es_entry {
	struct es_key key;
	struct es_image *img;
	UT_hash_handle hh;
};

struct es_cache {
	struct es_entry *entries;
	unsigned count;
	struct es_maps_memo *maps;	/* elfsym_maps.c */
};

struct es_view {
	struct es_cache *cache;
	struct es_object *objs;
	char **paths;
	unsigned n, cap;
	/* objs' indexes by start address, for es_proc_object_at (a stack
	 * walk asks for every word it reads); unused if two overlap. */
	unsigned *by_addr;
	bool overlap;
};

static bool sym_wanted(const GElf_Sym *s, enum es_kind *kind)
{
	if (s->st_shndx == SHN_UNDEF || s->st_name == 0)
		return false;
	switch (GELF_ST_TYPE(s->st_info)) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
		*kind = ES_FUNC;
		return true;
	case STT_OBJECT:
	case STT_COMMON:
	case STT_TLS:
		*kind = ES_OBJECT;
		return true;
	default:
		return false;
	}
}

static void add_addr(struct es_image *img, const GElf_Sym *s, const char *name,
		     bool local)
{
	struct es_addr *a;

	if (img->naddrs == img->addrs_cap) {
		img->addrs_cap = img->addrs_cap ? 2 * img->addrs_cap : 256;
		img->addrs = xrealloc(img->addrs,
				      img->addrs_cap * sizeof(*img->addrs));
	}
	a = &img->addrs[img->naddrs++];
	a->value = s->st_value;
	a->size = s->st_size;
	a->name = name;
	a->local = local;
}

/* Memory the image owns until es_image_free: string tables, names. */
static void *own(struct es_image *img, void *block)
{
	img->blocks = xrealloc(img->blocks,
			       (img->nblocks + 1) * sizeof(*img->blocks));
	img->blocks[img->nblocks++] = block;
	return block;
}

/* name points into a string table the image owns; e is a free entry of
 * the image's pool, used only when the name is new. */
static bool add_sym(struct es_image *img, const GElf_Sym *s, const char *name,
		    struct es_name *fresh)
{
	struct es_name *e;
	enum es_kind kind;
	bool local = GELF_ST_BIND(s->st_info) == STB_LOCAL, used = false;
	size_t len;

	if (!sym_wanted(s, &kind))
		return false;
	len = strlen(name);
	HASH_FIND(hh, img->names, name, len, e);
	if (!e) {
		e = fresh;
		used = true;
		e->name = (char *)name;
		HASH_ADD_KEYPTR(hh, img->names, e->name, len, e);
		img->nnames++;
	} else if (!(e->local && !local)) {
		/* The same symbol from .symtab and .dynsym, or a second
		 * static of the same name: keep the first, unless this one is
		 * global and the kept one local (that is what the linker
		 * would bind to). */
		goto addr;
	}
	e->value = s->st_value;
	e->size = s->st_size;
	e->kind = kind;
	e->local = local;
addr:
	if (kind == ES_FUNC)
		add_addr(img, s, e->name, local);
	return used;
}

/* Each table's strings are copied once, whole: the names point into the
 * copy (a copy of each name was most of the cost of indexing). */
static void read_symtab(struct es_image *img, Elf *elf, Elf_Scn *scn,
			const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	Elf_Data *strs = strscn ? elf_getdata(strscn, NULL) : NULL;
	struct es_name *pool;
	const char *str;
	size_t i, n, used = 0;

	if (!data || sh->sh_entsize == 0 || !strs || !strs->d_buf ||
	    strs->d_size == 0)
		return;
	n = sh->sh_size / sh->sh_entsize;
	str = own(img, xmalloc(strs->d_size + 1));
	memcpy((char *)str, strs->d_buf, strs->d_size);
	((char *)str)[strs->d_size] = '\0';
	pool = own(img, xcalloc(n ? n : 1, sizeof(*pool)));
	for (i = 1; i < n; i++) {
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (s.st_name == 0 || s.st_name >= strs->d_size ||
		    !str[s.st_name])
			continue;
		if (add_sym(img, &s, str + s.st_name, &pool[used]))
			used++;
	}
}

static void read_dynamic(struct es_image *img, Elf *elf, Elf_Scn *scn,
			 const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || sh->sh_entsize == 0)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Dyn d;
		const char *name;

		if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_PLTGOT)
			img->pltgot = d.d_un.d_ptr;
		if (d.d_tag == DT_TEXTREL ||
		    (d.d_tag == DT_FLAGS && (d.d_un.d_val & DF_TEXTREL)))
			img->textrel = true;
		if (d.d_tag != DT_NEEDED && d.d_tag != DT_SONAME)
			continue;
		name = elf_strptr(elf, sh->sh_link, d.d_un.d_val);
		if (!name)
			continue;
		if (d.d_tag == DT_SONAME) {
			free(img->soname);
			img->soname = xstrdup(name);
			continue;
		}
		img->needed = xrealloc(img->needed, (img->nneeded + 1) *
						    sizeof(*img->needed));
		img->needed[img->nneeded++] = xstrdup(name);
	}
}

static void read_segments(struct es_image *img, Elf *elf)
{
	size_t i, n;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	if (elf_getphdrnum(elf, &n) != 0)
		n = 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!(ph.p_flags & PF_W) && img->nro < ES_MAX_RO) {
			img->ro[img->nro].vaddr = ph.p_vaddr;
			img->ro[img->nro].filesz = ph.p_filesz;
			img->ro[img->nro++].offset = ph.p_offset;
		}
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
	}
	if (lo == UINT64_MAX)
		lo = 0;
	img->base_vaddr = lo & ~(page - 1);
	img->vaddr_end = hi;
}

/* Size of a .eh_frame_hdr value in encoding enc (DW_EH_PE_*), 0 if it
 * is not one a fixed-size read can take. */
static size_t eh_size(unsigned char enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a:	/* udata2, sdata2 */
		return 2;
	case 0x03: case 0x0b:	/* udata4, sdata4 */
		return 4;
	case 0x04: case 0x0c:	/* udata8, sdata8 */
		return 8;
	default:
		return 0;
	}
}

static uint64_t eh_value(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];	/* little-endian, as the target */
	return v;
}

/*
 * The binary-search table of .eh_frame_hdr (PT_GNU_EH_FRAME), in the
 * only layout libunwind searches: entries of two datarel sdata4 values
 * (0x3b).  Read once here so that the unwinder does not map the file
 * and read /proc/PID/maps again for every frame.
 */
static void read_eh_table(struct es_image *img, Elf *elf,
			  const GElf_Phdr *ph)
{
	size_t fsize = 0, ptr_size, count_size;
	const unsigned char *raw = (const unsigned char *)elf_rawfile(elf,
								      &fsize);
	const unsigned char *h;

	if (!raw || ph->p_offset + 4 > fsize || ph->p_filesz < 4)
		return;
	h = raw + ph->p_offset;
	/* version 1, eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (h[0] != 1 || h[3] != 0x3b)
		return;
	ptr_size = h[1] == 0xff ? 0 : eh_size(h[1]);
	count_size = eh_size(h[2]);
	if ((h[1] != 0xff && !ptr_size) || !count_size ||
	    4 + ptr_size + count_size > ph->p_filesz ||
	    ph->p_offset + 4 + ptr_size + count_size > fsize)
		return;
	img->eh.hdr = ph->p_vaddr;
	img->eh.table = ph->p_vaddr + 4 + ptr_size + count_size;
	img->eh.count = eh_value(h + 4 + ptr_size, count_size);
}

static void read_eh_frame_hdr(struct es_image *img, Elf *elf)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n) != 0)
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) &&
		    ph.p_type == PT_GNU_EH_FRAME) {
			read_eh_table(img, elf, &ph);
			return;
		}
	}
}

static int cmp_addr(const void *a, const void *b)
{
	const struct es_addr *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* At one address a global name reads better than a local alias,
	 * and a sized symbol is more precise than a 0-size label. */
	if (x->local != y->local)
		return x->local ? 1 : -1;
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The GNU hash of a name (the dynamic linker's). */
static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = h * 33 + *p;
	return h;
}

/*
 * Whether .dynsym may hold name, by .gnu.hash as the dynamic linker
 * looks: the Bloom filter, then the hash values of the name's bucket
 * chain.  False is certain (see read_gnu_hash); true is then checked in
 * the index (a full 32-bit hash collision is rare).
 */
static bool gnu_hash_maybe(const struct es_image *img, const char *name)
{
	const uint32_t *w = img->gh, *buckets, *chain;
	uint32_t h = gnu_hash(name), nbuckets = w[0], symoffset = w[1];
	uint32_t nbloom = w[2], shift = w[3], i;
	uint64_t word, mask;
	size_t nchain;

	memcpy(&word, w + 4 + 2 * (size_t)((h / 64) % nbloom), sizeof(word));
	mask = 1ULL << (h % 64) | 1ULL << ((h >> shift) % 64);
	if ((word & mask) != mask)
		return false;
	buckets = w + 4 + 2 * (size_t)nbloom;
	chain = buckets + nbuckets;
	nchain = img->gh_words - (size_t)(chain - w);
	i = buckets[h % nbuckets];
	if (i < symoffset)
		return false;
	for (; i - symoffset < nchain; i++) {
		uint32_t c = chain[i - symoffset];

		if ((c | 1) == (h | 1))
			return true;
		if (c & 1)
			break;
	}
	return false;
}

/*
 * .gnu.hash, kept when it alone can say a name is not among the symbols
 * the index would hold: the file has no .symtab (stripped, as
 * distributions ship libraries), and the .dynsym entries before the
 * hashed ones (imports) define nothing the index takes.
 */
static void read_gnu_hash(struct es_image *img, Elf *elf, Elf_Scn *hash,
			  Elf_Scn *dynsym)
{
	Elf_Data *h = elf_getdata(hash, NULL), *d = elf_getdata(dynsym, NULL);
	const uint32_t *w;
	uint32_t symoffset;
	size_t words;
	enum es_kind kind;

	if (gelf_getclass(elf) != ELFCLASS64 || !h || !d || h->d_size < 16)
		return;
	w = h->d_buf;
	words = h->d_size / 4;
	symoffset = w[1];
	if (!w[0] || !w[2] || (w[2] & (w[2] - 1)) ||
	    words < 4 + 2 * (size_t)w[2] + w[0])
		return;
	for (uint32_t i = 1; i < symoffset; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(d, (int)i, &sym) || sym_wanted(&sym, &kind))
			return;
	}
	img->gh = xmalloc(words * 4);
	memcpy(img->gh, w, words * 4);
	img->gh_words = words;
}

/* What every use needs, read at open; the symbols wait (es_image_symbols). */
static int index_elf(struct es_image *img, Elf *elf, const char *path)
{
	Elf_Scn *scn = NULL, *hash = NULL, *dynsym = NULL;
	bool symtab = false;

	if (elf_kind(elf) != ELF_K_ELF) {
		md_error("%s: not an ELF file", path);
		return -MD_E_INPUT;
	}
	read_segments(img, elf);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = true;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_HASH)
			hash = scn;
		else if (sh.sh_type == SHT_DYNAMIC)
			read_dynamic(img, elf, scn, &sh);
	}
	if (!symtab && hash && dynsym)
		read_gnu_hash(img, elf, hash, dynsym);
	read_eh_frame_hdr(img, elf);
	img->eh.gp = img->pltgot;
	return 0;
}

static void index_symbols(struct es_image *img, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			read_symtab(img, elf, scn, &sh);
	}
	if (img->naddrs)
		qsort(img->addrs, img->naddrs, sizeof(*img->addrs), cmp_addr);
}

/*
 * Most images are never asked for a symbol they define: of the hundred
 * objects mpirun maps, one holds the MPIR symbols, and the names looked
 * for everywhere are missing everywhere else.  Reading every symbol
 * table at open was half of a small collection.  The file stays open,
 * so a file replaced on disk meanwhile does not change the image.
 */
/* After the index: the file and its hash table are no longer needed. */
static void drop_file(struct es_image *img)
{
	if (img->fd >= 0)
		close(img->fd);
	img->fd = -1;
	free(img->gh);
	img->gh = NULL;
}

void es_image_symbols(const struct es_image *cimg)
{
	struct es_image *img = (struct es_image *)cimg;
	Elf *elf;

	if (img->indexed)
		return;
	img->indexed = true;
	elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		index_symbols(img, elf);
		elf_end(elf);
	}
	drop_file(img);
}

/* Above this many open files an image is indexed at open. */
#define ES_MAX_OPEN_FD 512

int es_image_open(const char *path, struct es_image **out)
{
	struct es_image *img;
	Elf *elf;
	int fd, ret;

	*out = NULL;
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		md_error("open(%s): %s", path, strerror(errno));
		return -MD_E_INPUT;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		md_error("elf_begin(%s): %s", path, elf_errmsg(-1));
		close(fd);
		return -MD_E_INPUT;
	}
	img = xcalloc(1, sizeof(*img));
	img->path = xstrdup(path);
	img->fd = fd;
	ret = index_elf(img, elf, path);
	if (!ret && fd >= ES_MAX_OPEN_FD) {
		index_symbols(img, elf);
		img->indexed = true;
	}
	elf_end(elf);
	if (img->indexed || ret)
		drop_file(img);
	if (ret) {
		es_image_free(img);
		return ret;
	}
	*out = img;
	return 0;
}

void es_image_free(struct es_image *img)
{
	if (!img)
		return;
	if (img->map && img->map != MAP_FAILED)
		munmap((void *)img->map, img->map_size);
	drop_file(img);
	HASH_CLEAR(hh, img->names);
	while (img->nblocks)
		free(img->blocks[--img->nblocks]);
	free(img->blocks);
	while (img->nneeded)
		free(img->needed[--img->nneeded]);
	free(img->needed);
	free(img->soname);
	free(img->addrs);
	free(img->path);
	free(img);
}

const char *es_image_path(const struct es_image *img)
{
	return img->path;
}

unsigned es_image_nsyms(const struct es_image *img)
{
	es_image_symbols(img);
	return img->nnames;
}

uint64_t es_image_base_vaddr(const struct es_image *img)
{
	return img->base_vaddr;
}

/* The file, mapped read-only once; MAP_FAILED if it cannot be. */
static const unsigned char *image_map(struct es_image *img)
{
	struct stat st;
	int fd;

	if (img->map)
		return img->map;
	img->map = MAP_FAILED;
	/* The file opened by es_image_open while it is still open. */
	fd = img->fd >= 0 ? fcntl(img->fd, F_DUPFD_CLOEXEC, 0)
			  : open(img->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return img->map;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ,
			       MAP_PRIVATE, fd, 0);

		if (m != MAP_FAILED) {
			img->map = m;
			img->map_size = (size_t)st.st_size;
		}
	}
	close(fd);
	return img->map;
}

int es_image_read_ro(const struct es_image *cimg, uint64_t vaddr, void *out,
		     size_t len)
{
	struct es_image *img = (struct es_image *)cimg;
	const unsigned char *m;

	if (img->textrel)
		return -MD_E_FAULT;
	for (unsigned i = 0; i < img->nro; i++) {
		uint64_t off = vaddr - img->ro[i].vaddr;

		if (vaddr < img->ro[i].vaddr || off >= img->ro[i].filesz ||
		    len > img->ro[i].filesz - off)
			continue;
		m = image_map(img);
		off += img->ro[i].offset;
		if (m == MAP_FAILED || off > img->map_size ||
		    len > img->map_size - off)
			return -MD_E_FAULT;
		memcpy(out, m + off, len);
		return 0;
	}
	return -MD_E_FAULT;
}

int es_image_eh_table(const struct es_image *img, struct es_eh_table *out)
{
	if (!img->eh.count)
		return -MD_E_NOSYM;
	*out = img->eh;
	return 0;
}

int es_lookup_full(const struct es_image *img, const char *name,
		   uint64_t *value, uint64_t *size, enum es_kind *kind)
{
	struct es_name *e;

	if (!img->indexed) {
		if (img->gh && !gnu_hash_maybe(img, name))
			return -MD_E_NOSYM;
		es_image_symbols(img);
	}
	HASH_FIND_STR(img->names, name, e);
	if (!e)
		return -MD_E_NOSYM;
	if (value)
		*value = e->value;
	if (size)
		*size = e->size;
	if (kind)
		*kind = e->kind;
	return 0;
}

int es_lookup(const struct es_image *img, const char *name, uint64_t *value)
{
	return es_lookup_full(img, name, value, NULL, NULL);
}

int es_addr_to_name(const struct es_image *img, uint64_t addr,
		    const char **name, uint64_t *offset)
{
	size_t lo, hi;
	const struct es_addr *a;

	es_image_symbols(img);
	lo = 0;
	hi = img->naddrs;
	/* Last symbol with value <= addr; the sort puts the preferred name
	 * first among equal values, so step back to it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->addrs[mid].value <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -MD_E_NOSYM;
	a = &img->addrs[lo - 1];
	while (a > img->addrs && a[-1].value == a->value)
		a--;
	/* A 0-size symbol (an assembler label) reaches up to the next
	 * symbol, which is past addr by construction, or the end of the
	 * loaded segments. */
	if (a->size ? addr >= a->value + a->size
		    : lo == img->naddrs && addr >= img->vaddr_end)
		return -MD_E_NOSYM;
	*name = a->name;
	if (offset)
		*offset = addr - a->value;
	return 0;
}

/* ---- cache ---- */

struct es_cache *es_cache_new(void)
{
	return xcalloc(1, sizeof(struct es_cache));
}

void es_cache_free(struct es_cache *c)
{
	struct es_entry *e, *tmp;

	if (!c)
		return;
	es_maps_memo_free(c->maps);
	HASH_ITER(hh, c->entries, e, tmp) {
		HASH_DEL(c->entries, e);
		es_image_free(e->img);
		free(e);
	}
	free(c);
}

struct es_maps_memo **es_cache_maps_memo(struct es_cache *c)
{
	return &c->maps;
}

unsigned es_cache_count(const struct es_cache *c)
{
	return c->count;
}

/* Maps list non-ELF files too (locale archives, fonts): skip them
 * without a message. */
static bool looks_like_elf(const char *path)
{
	unsigned char magic[SELFMAG];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == SELFMAG && memcmp(magic, ELFMAG, SELFMAG) == 0;
}

static int cache_get(struct es_cache *c, const char *path, bool quiet,
		     struct es_image **img)
{
	struct es_entry *e;
	struct es_key key;
	struct stat st;
	int ret;

	*img = NULL;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (!quiet)
			md_error("stat(%s): %s", path,
				 errno ? strerror(errno) : "not a file");
		return -MD_E_INPUT;
	}
	memset(&key, 0, sizeof(key));
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	key.size = st.st_size;
	HASH_FIND(hh, c->entries, &key, sizeof(key), e);
	if (e) {
		*img = e->img;
		return 0;
	}
	if (quiet && !looks_like_elf(path))
		return -MD_E_INPUT;
	ret = es_image_open(path, img);
	if (ret)
		return ret;
	e = xcalloc(1, sizeof(*e));
	e->key = key;
	e->img = *img;
	HASH_ADD(hh, c->entries, key, sizeof(key), e);
	c->count++;
	return 0;
}

int es_cache_get(struct es_cache *c, const char *path, struct es_image **img)
{
	return cache_get(c, path, false, img);
}

int es_cache_get_quiet(struct es_cache *c, const char *path,
		       struct es_image **img)
{
	return cache_get(c, path, true, img);
}

/* ---- process views ---- */

struct es_view *es_view_new(struct es_cache *c)
{
	struct es_view *v = xcalloc(1, sizeof(*v));

	v->cache = c;
	return v;
}

void es_view_free(struct es_view *v)
{
	unsigned i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++)
		free(v->paths[i]);
	free(v->paths);
	free(v->objs);
	free(v->by_addr);
	free(v);
}

/* Put object i in by_addr, by start address, and note an overlap. */
static void index_by_addr(struct es_view *v, unsigned i)
{
	const struct es_object *o = &v->objs[i];
	unsigned lo = 0, hi = i;	/* i objects are indexed */

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (v->objs[v->by_addr[mid]].start <= o->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&v->by_addr[lo + 1], &v->by_addr[lo],
		(i - lo) * sizeof(*v->by_addr));
	v->by_addr[lo] = i;
	if ((lo > 0 && v->objs[v->by_addr[lo - 1]].end > o->start) ||
	    (lo < i && o->end > v->objs[v->by_addr[lo + 1]].start))
		v->overlap = true;
}

static void view_push(struct es_view *v, const char *path, char *owned,
		      uint64_t bias, struct es_image *img)
{
	struct es_object *o;
	unsigned i;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 16;
		v->objs = xrealloc(v->objs, v->cap * sizeof(*v->objs));
		v->paths = xrealloc(v->paths, v->cap * sizeof(*v->paths));
		v->by_addr = xrealloc(v->by_addr,
				      v->cap * sizeof(*v->by_addr));
	}
	i = v->n++;
	v->paths[i] = owned;
	o = &v->objs[i];
	o->path = path;
	o->bias = bias;
	o->img = img;
	o->start = img->base_vaddr + bias;
	o->end = img->vaddr_end + bias;
	index_by_addr(v, i);
}

void es_view_append(struct es_view *v, const char *path, uint64_t bias,
		    struct es_image *img)
{
	char *copy = xstrdup(path);

	view_push(v, copy, copy, bias, img);
}

void es_view_append_borrowed(struct es_view *v, const char *path,
			     uint64_t bias, struct es_image *img)
{
	view_push(v, path, NULL, bias, img);
}

int es_view_add(struct es_view *v, const char *path, uint64_t bias)
{
	struct es_image *img;
	int ret = es_cache_get(v->cache, path, &img);

	if (ret)
		return ret;
	es_view_append(v, path, bias, img);
	return 0;
}

unsigned es_view_count(const struct es_view *v)
{
	return v->n;
}

const struct es_object *es_view_object(const struct es_view *v, unsigned i)
{
	return i < v->n ? &v->objs[i] : NULL;
}

int es_proc_lookup_obj(const struct es_view *v, const char *name,
		       uint64_t *addr, const struct es_object **obj)
{
	unsigned i;
	uint64_t value;

	for (i = 0; i < v->n; i++) {
		if (es_lookup(v->objs[i].img, name, &value) == 0) {
			if (addr)
				*addr = value + v->objs[i].bias;
			if (obj)
				*obj = &v->objs[i];
			return 0;
		}
	}
	return -MD_E_NOSYM;
}

int es_proc_lookup(const struct es_view *v, const char *name, uint64_t *addr)
{
	return es_proc_lookup_obj(v, name, addr, NULL);
}

const struct es_object *es_proc_object_at(const struct es_view *v,
					  uint64_t pc)
{
	unsigned i, lo = 0, hi = v->n;
	const struct es_object *o;

	if (v->overlap) {	/* the first in the view's order */
		for (i = 0; i < v->n; i++)
			if (pc >= v->objs[i].start && pc < v->objs[i].end)
				return &v->objs[i];
		return NULL;
	}
	/* The last object that starts at or below pc. */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (v->objs[v->by_addr[mid]].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	o = &v->objs[v->by_addr[lo - 1]];
	return pc < o->end ? o : NULL;
}
