/*
 * elfsym.h - ELF symbols of files on disk (libelf), and a process view:
 * the loaded objects of one process with their load bias, searched in
 * dynamic-linker order.
 *
 * Reads files only.  The caller says which objects a process has loaded,
 * either as the text of /proc/PID/maps or one object at a time, so the
 * whole module is testable without a live process.
 */
#ifndef MD_ELFSYM_H
#define MD_ELFSYM_H

#include <stddef.h>
#include <stdint.h>

/* Symbol kinds kept in the index. */
enum es_kind {
	ES_FUNC,	/* STT_FUNC, STT_GNU_IFUNC */
	ES_OBJECT,	/* STT_OBJECT, STT_COMMON, STT_TLS */
};

struct es_image;	/* one ELF file, its symbols indexed */
struct es_cache;	/* images by file identity, shared by all ranks */
struct es_view;		/* one process: its loaded objects in linker order */

/*
 * Open the ELF file at path and index its defined function and object
 * symbols from .symtab and .dynsym.  Returns 0 and *out (owned by the
 * caller, es_image_free), or -MD_E_INPUT (not a readable ELF file) after
 * reporting it.  A file without any symbol table is not an error.
 */
int es_image_open(const char *path, struct es_image **out);
/* Free an image; NULL does nothing. */
void es_image_free(struct es_image *img);

/* The path the image was opened with; valid as long as the image. */
const char *es_image_path(const struct es_image *img);
/* Number of distinct symbol names indexed. */
unsigned es_image_nsyms(const struct es_image *img);
/*
 * The lowest PT_LOAD p_vaddr rounded down to the page size: what the load
 * bias is measured against (0 for a shared library or PIE, 0x400000 for a
 * classic executable).
 */
uint64_t es_image_base_vaddr(const struct es_image *img);

/*
 * Where the unwind tables of an image are, in its own vaddr space: the
 * .eh_frame_hdr section (PT_GNU_EH_FRAME), its binary-search table of
 * count entries (pairs of datarel sdata4 values, encoding 0x3b), and the
 * image's DT_PLTGOT (the data-relative base; 0 without one).
 */
struct es_eh_table {
	uint64_t hdr, table, count, gp;
};

/*
 * The image's search table.  Returns 0 and *out, or -MD_E_NOSYM without
 * a message when it has none in that encoding (the unwinder then finds
 * its own way).
 */
int es_image_eh_table(const struct es_image *img, struct es_eh_table *out);

/*
 * The len bytes at vaddr (the image's own vaddr space) when they lie in a
 * read-only PT_LOAD segment, from the file: what a process that maps the
 * image holds there, without reading the process (the unwinder reads
 * .eh_frame_hdr and .eh_frame of every rank, and every rank maps the same
 * libraries).  This trusts, as the symbols do, that the file is the one
 * the process mapped.  Returns 0, or -MD_E_FAULT without a message when
 * the bytes are elsewhere, the file has text relocations or cannot be
 * mapped.  Maps the file on first use (not thread-safe).
 */
int es_image_read_ro(const struct es_image *img, uint64_t vaddr, void *out,
		     size_t len);

/*
 * Look a symbol up by name.  Returns 0 and its st_value in *value (value
 * may be NULL: only say whether it exists), or -MD_E_NOSYM without a
 * message: not finding a symbol is an answer, not a failure.  When a name
 * is defined several times a global or weak definition wins over a local
 * one.  kind and size may be NULL.
 */
int es_lookup(const struct es_image *img, const char *name, uint64_t *value);
int es_lookup_full(const struct es_image *img, const char *name,
		   uint64_t *value, uint64_t *size, enum es_kind *kind);

/*
 * The function symbol that covers addr (an address in the file's own
 * vaddr space, i.e. runtime pc minus load bias).  A symbol covers
 * [st_value, st_value + st_size); a symbol of size 0 covers up to the
 * next symbol.  Returns 0, *name (valid as long as the image) and
 * *offset (addr - st_value; may be NULL), or -MD_E_NOSYM without a
 * message.
 */
int es_addr_to_name(const struct es_image *img, uint64_t addr,
		    const char **name, uint64_t *offset);

/*
 * The image cache: ranks that load the same file (same device and inode,
 * same mtime) share one opened and indexed image.  es_cache_free frees
 * every image it handed out.
 */
struct es_cache *es_cache_new(void);
void es_cache_free(struct es_cache *c);
/*
 * The image for path, opened on first use.  Returns 0 and *img (borrowed:
 * valid until es_cache_free), or the code of es_image_open / -MD_E_INPUT
 * when the file cannot be stat()ed (reported).  A file replaced on disk
 * since it was cached is opened again.
 */
int es_cache_get(struct es_cache *c, const char *path, struct es_image **img);
/* Images opened so far (for tests and progress output). */
unsigned es_cache_count(const struct es_cache *c);

/* One loaded object of a process view. */
struct es_object {
	const char *path;	/* valid as long as the view */
	uint64_t bias;		/* runtime address = file vaddr + bias */
	uint64_t start, end;	/* runtime range of its PT_LOAD segments */
	struct es_image *img;	/* borrowed from the cache */
};

/*
 * An empty view whose images come from c (borrowed: c must outlive the
 * view).  Free with es_view_free; NULL does nothing.
 */
struct es_view *es_view_new(struct es_cache *c);
void es_view_free(struct es_view *v);
/*
 * Append a loaded object: add them in dynamic-linker search order
 * (executable first, then libraries in load order, as the r_debug
 * link_map list gives them).  Returns 0 or the es_cache_get code.
 */
int es_view_add(struct es_view *v, const char *path, uint64_t bias);
/*
 * Build a view from the text of /proc/PID/maps.  exe_path is the
 * process's executable (readlink of /proc/PID/exe); NULL takes the first
 * file mapped.  Each file's bias is the start of its lowest mapping with
 * file offset 0 minus es_image_base_vaddr.  Order: ld.so's global scope,
 * i.e. the executable, then its DT_NEEDED libraries breadth-first
 * (matched by DT_SONAME or file name); then objects dlopen()ed later
 * (Open MPI's plugins) by decreasing address, an approximation of their
 * load order (a caller that reads link_map can use es_view_add instead).
 * Mappings that are not readable ELF files ([heap], [vdso], deleted
 * files, locale archives) are skipped silently, and so are files mapped
 * only MAP_SHARED (shared-memory segments: ld.so maps objects private).
 * What depends only on the files is kept in c for later views: each
 * file by the device, inode and path its maps line gives (opened and
 * indexed once; a file rewritten in place under the same inode during
 * the cache's life is not seen) and the linker order of each distinct
 * list of images, so a view of another rank costs the parse of its maps
 * and its load biases.  Returns 0 and *out, or -MD_E_INPUT for text that
 * is not maps format (reported).
 */
int es_view_from_maps(struct es_cache *c, const char *maps_text,
		      const char *exe_path, struct es_view **out);

/*
 * One entry of ld.so's link_map list (r_debug.r_map): l_name ("" for
 * the executable) and l_addr, the load bias.
 */
struct es_link {
	const char *name;
	uint64_t addr;
};

/*
 * Reading /proc/PID/maps costs the kernel ~1 us a line (500 lines in an
 * Open MPI rank); a rank's link_map list gives the same biases from its
 * memory.  es_links_learn pairs the list of the process whose maps gave
 * c's last es_view_from_maps with that view's objects, by bias: each
 * name is a file of the view or none (the vdso).  Returns 0, or
 * -MD_E_NOSYM (quietly; nothing learnt) when an object of the view is
 * not in the list or a name comes twice.
 *
 * es_view_from_links then builds the view of another process of the
 * same program from its list alone: the view es_view_from_maps would
 * give, its objects in the same order.  Returns 0 and *out, or quietly
 * -MD_E_NOSYM when nothing was learnt or the list has a name not learnt
 * or lacks an object (the caller reads the maps instead).
 */
int es_links_learn(struct es_cache *c, const struct es_link *links,
		   unsigned n);
int es_view_from_links(struct es_cache *c, const struct es_link *links,
		       unsigned n, struct es_view **out);

/* Objects in search order; i < es_view_count. Borrowed, valid as long
 * as the view. */
unsigned es_view_count(const struct es_view *v);
const struct es_object *es_view_object(const struct es_view *v, unsigned i);

/*
 * Find a symbol in the process: the first object in search order that
 * defines name gives its runtime address (st_value + bias) in *addr.  addr
 * may be NULL (Open MPI's DLL asks find_symbol("MPIR_Ignore_queues", NULL)
 * only to know whether it exists).  obj may be NULL.  Returns 0 or
 * -MD_E_NOSYM without a message.
 */
int es_proc_lookup(const struct es_view *v, const char *name, uint64_t *addr);
int es_proc_lookup_obj(const struct es_view *v, const char *name,
		       uint64_t *addr, const struct es_object **obj);

/*
 * The object whose PT_LOAD range holds runtime address pc, or NULL.
 * Borrowed, valid as long as the view.
 */
const struct es_object *es_proc_object_at(const struct es_view *v,
					  uint64_t pc);

#endif /* MD_ELFSYM_H */
