/*
 * dwlines.h - source locations of code addresses: function name, file and
 * line from DWARF (.debug_line and DW_TAG_subprogram ranges), with the
 * ELF symbol table as the fall-back for names.  One table per ELF file;
 * it reads a compilation unit's lines when an address first asks for it
 * (found through .debug_aranges), so a stack costs the units it touches,
 * not the whole file.  Tables are not thread-safe.
 */
#ifndef MD_DWLINES_H
#define MD_DWLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "elfsym.h"

struct dl_table;
struct dl_cache;

/* A source location; strings are borrowed from the table. */
struct dl_loc {
	const char *func;	/* NULL if unknown */
	const char *file;	/* NULL without line information */
	int line;		/* 0 if unknown */
};

/*
 * Read the line table and function ranges of the ELF file at elf_path,
 * from its own DWARF or its separate debug file (debugfile.h).  syms (may
 * be NULL; borrowed, must outlive the table) names functions that DWARF
 * does not cover.  A file without DWARF gives a table without lines, not
 * an error.  With memo, answers come from the memo of an earlier run
 * where there is one (dwlines_memo.h); without, always from the DWARF.
 * Returns 0 and *out (dl_table_free), or -MD_E_INPUT after reporting
 * when the file or its DWARF is unreadable.
 */
int dl_table_open(const char *elf_path, const struct es_image *syms,
		  bool memo, struct dl_table **out);
/* Free a table; NULL does nothing. */
void dl_table_free(struct dl_table *t);

/* Number of line rows read so far (0 until a lookup has read a unit, and
 * always 0 without line information), and the time spent reading. */
unsigned dl_table_nrows(const struct dl_table *t);
long long dl_table_build_ns(const struct dl_table *t);

/*
 * The location of addr, an address in the file's own vaddr space (runtime
 * pc minus load bias).  For a caller's frame pass the return address
 * minus 1, so that the call's line is found rather than the next one.
 * Returns 0 and *loc when a function or a line was found (fields that
 * are unknown are NULL / 0), or -MD_E_NOSYM without a message.  May read
 * DWARF into t (the answers do not depend on what was read before).
 */
int dl_lookup(const struct dl_table *t, uint64_t addr, struct dl_loc *loc);

/*
 * Tables by path, each opened on first use (with memo as given here).
 * dl_cache_get returns 0 and *t (borrowed: valid until dl_cache_free),
 * or the dl_table_open code.
 */
struct dl_cache *dl_cache_new(bool memo);
void dl_cache_free(struct dl_cache *c);
int dl_cache_get(struct dl_cache *c, const char *elf_path,
		 const struct es_image *syms, const struct dl_table **t);

#endif /* MD_DWLINES_H */
