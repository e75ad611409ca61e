/*
 * elfsym_int.h - what elfsym.c shares with elfsym_maps.c (the view built
 * from /proc/PID/maps text): the image record and two helpers.
 */
#ifndef MD_ELFSYM_INT_H
#define MD_ELFSYM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "elfsym.h"

#define ES_MAX_RO 8

struct es_image {
	char *path;
	struct es_name *names;	/* uthash head */
	unsigned nnames;
	struct es_addr *addrs;	/* functions sorted by value */
	size_t naddrs, addrs_cap;
	uint64_t base_vaddr, vaddr_end;
	char *soname;		/* DT_SONAME, NULL if none */
	char **needed;		/* DT_NEEDED names, in order */
	unsigned nneeded;
	struct es_eh_table eh;	/* eh.count == 0: none usable */
	uint64_t pltgot;	/* DT_PLTGOT, 0 if none */
	/* The read-only PT_LOAD segments, whose bytes in a process are the
	 * file's (es_image_read_ro); none if the file has text
	 * relocations.  The file is mapped on the first such read. */
	struct { uint64_t vaddr, filesz, offset; } ro[ES_MAX_RO];
	unsigned nro;
	bool textrel;
	const unsigned char *map;	/* MAP_FAILED: cannot be mapped */
	size_t map_size;
	void **blocks;		/* string tables and names, owned */
	unsigned nblocks;
	/* The symbols are indexed on the first look-up that needs them
	 * (es_image_symbols): until then the file stays open (fd), and the
	 * .gnu.hash of a file whose only symbols are in .dynsym answers
	 * "not here" without an index (gh NULL: not usable). */
	bool indexed;
	int fd;
	uint32_t *gh;		/* a copy of .gnu.hash */
	size_t gh_words;
};

/* The image's symbol index, built now if it was not (not thread-safe). */
void es_image_symbols(const struct es_image *img);

/* es_cache_get for files listed in maps: a file that is not ELF (locale
 * archives, fonts) or cannot be stat()ed gives -MD_E_INPUT silently. */
int es_cache_get_quiet(struct es_cache *c, const char *path,
		       struct es_image **img);

/* Append an object to v (path copied; img borrowed from the cache). */
void es_view_append(struct es_view *v, const char *path, uint64_t bias,
		    struct es_image *img);

/* Append an object whose path is owned by the cache (valid until
 * es_cache_free, which outlives the view). */
void es_view_append_borrowed(struct es_view *v, const char *path,
			     uint64_t bias, struct es_image *img);

/* What es_view_from_maps keeps per file and per list of images
 * (elfsym_maps.c), held by the cache: its slot, and its free. */
struct es_maps_memo;
struct es_maps_memo **es_cache_maps_memo(struct es_cache *c);
void es_maps_memo_free(struct es_maps_memo *mm);

#endif /* MD_ELFSYM_INT_H */
