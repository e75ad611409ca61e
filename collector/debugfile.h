/*
 * debugfile.h - find the separate debug file of a stripped ELF file, the
 * way gdb and elfutils do: by GNU build-id under the debug root, then by
 * the .gnu_debuglink name (with its CRC32 checked) beside the file, in
 * .debug/ beside it and under the debug root.
 */
#ifndef MD_DEBUGFILE_H
#define MD_DEBUGFILE_H

#include <stdint.h>

/* The standard debug root. */
#define DF_DEBUG_ROOT "/usr/lib/debug"

/*
 * Whether the ELF file at path has a .debug_info section of non-zero size.
 * Returns 1 or 0, or -MD_E_INPUT when it is not a readable ELF file
 * (reported).
 */
int df_has_debug_info(const char *path);

/*
 * The file's GNU build-id as lower-case hex.  Returns 0 and *hex (caller
 * frees), or -MD_E_NOSYM without a message when the file has none, or
 * -MD_E_INPUT when it is not a readable ELF file (reported).
 */
int df_build_id(const char *path, char **hex);

/*
 * The .gnu_debuglink of the file.  Returns 0, *name (caller frees) and
 * *crc, or -MD_E_NOSYM without a message when the file has none.
 */
int df_debuglink(const char *path, char **name, uint32_t *crc);

/* CRC32 as .gnu_debuglink uses it (zlib's), over a whole file.  Returns 0
 * or -MD_E_INPUT (reported). */
int df_file_crc32(const char *path, uint32_t *crc);

/*
 * Find the separate debug file of elf_path: a file that has .debug_info
 * and matches (same build-id, or the debuglink CRC).  debug_root NULL
 * means DF_DEBUG_ROOT (tests pass their own).  Returns 0, *debug_path and
 * *how, a one-line description such as "separate debug file
 * /usr/lib/debug/.build-id/ab/cdef.debug (by build-id)" (both owned by
 * the caller), or -MD_E_NOTYPES without a message when there is none:
 * the caller decides whether that is a failure.
 */
int df_find(const char *elf_path, const char *debug_root, char **debug_path,
	    char **how);

#endif /* MD_DEBUGFILE_H */
