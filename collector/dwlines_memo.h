/*
 * dwlines_memo.h - private to dwlines.c: the answers of a line table kept
 * on disk between collections, by the GNU build-id of the ELF file.
 *
 * A hung job's ranks sit in the same few functions of libc and the MPI
 * library, collection after collection, while opening a big separate
 * debug file costs more than the whole rest of a small collection
 * (libc6-dbg's zlib-compressed DWARF: ~0.12 s).  The memo answers the
 * addresses asked before without opening the DWARF at all; a new address
 * opens it as before.
 *
 * A memo is used only for a file with a build-id whose DWARF (its own or
 * its separate debug file's) is big, and only while the DWARF file is the
 * same one (path, size and modification time are in the memo's first
 * line), so installing or removing a debug package, or a new version of
 * mpi-deadlock that answers differently (DL_MEMO_FORMAT), starts a fresh
 * memo.  The memo is only a cache: a file that is missing, unreadable,
 * not the user's own or not well-formed is ignored and written anew; two
 * collections writing at once lose at most each other's new answers.
 */
#ifndef MD_DWLINES_MEMO_H
#define MD_DWLINES_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "dwlines.h"

struct dl_memo;

/*
 * The memo of elf_path, whose DWARF is in dwarf_path (elf_path itself or
 * its separate debug file), read from md_cache_dir()/lines.  NULL when
 * the file is not worth a memo (no build-id, small DWARF).  The caller
 * decides whether to use memos at all (col_opts.no_line_memo).
 */
struct dl_memo *dl_memo_open(const char *elf_path, const char *dwarf_path);

/* Whether addr was answered before: then *loc (strings owned by the memo,
 * valid until dl_memo_close)
 * and *ret (0 or -MD_E_NOSYM, what dl_lookup returned). */
bool dl_memo_find(struct dl_memo *m, uint64_t addr, struct dl_loc *loc,
		  int *ret);
/* Keep dl_lookup's answer for addr. */
void dl_memo_add(struct dl_memo *m, uint64_t addr, const struct dl_loc *loc,
		 int ret);

/* Write the memo back if it learnt anything, and free it; NULL does
 * nothing.  Never reports: a cache that cannot be written is no error. */
void dl_memo_close(struct dl_memo *m);

#endif /* MD_DWLINES_MEMO_H */
