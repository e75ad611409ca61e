/*
 * dwtypes.h - C type layouts from DWARF (libdwarf): sizeof and member
 * offsets of named structs, unions, typedefs and base types, which is
 * what an MPI library's message-queue DLL asks through find_type, sizeof
 * and field_offset.
 *
 * An index is built once per ELF file with one pass over its compilation
 * units, recording where each named type is defined; a type's layout is
 * read on its first query and kept.
 */
#ifndef MD_DWTYPES_H
#define MD_DWTYPES_H

#include <stdbool.h>

struct dt_index;
struct dt_type;

/*
 * Index the types of the ELF file at elf_path, from its own .debug_info,
 * else from its separate debug file (debugfile.h: build-id, then
 * .gnu_debuglink).  Returns 0, *out (owned by the caller, dt_index_free)
 * and *source (may be NULL; borrowed, valid as long as the index) saying
 * where the types came from: "DWARF of <path>" or "separate debug file
 * <path> (by ...)".  Returns -MD_E_NOTYPES WITHOUT a message when neither
 * exists, because the caller may have a fallback (dt_index_open_mpi);
 * -MD_E_INPUT after reporting when the file or its DWARF is unreadable.
 */
int dt_index_open(const char *elf_path, struct dt_index **out,
		  const char **source);
/* Free an index and every type it handed out; NULL does nothing. */
void dt_index_free(struct dt_index *idx);

/* Where the types came from (see dt_index_open); valid as long as idx. */
const char *dt_index_source(const struct dt_index *idx);
/* Replace the source description (the provider names itself). */
void dt_index_set_source(struct dt_index *idx, const char *source);
/* Named type definitions indexed, and the time the index took to build. */
unsigned dt_index_ntypes(const struct dt_index *idx);
long long dt_index_build_ns(const struct dt_index *idx);
/* Compilation units walked while building. */
unsigned dt_index_ncus(const struct dt_index *idx);

/*
 * Find a type by name: a typedef or base type name ("opal_list_t",
 * "int"), else a struct/union/enum tag; "struct x" / "union x" ask for the
 * tag only.  Typedefs, const and volatile are followed to the type they
 * name; a struct seen only as a declaration is replaced by its complete
 * definition from another unit.  Returns 0 and *type (borrowed, valid as
 * long as idx), or -MD_E_NOTYPES without a message when the name is not
 * defined (the DLL decides what a missing type means).
 */
int dt_find_type(struct dt_index *idx, const char *name,
		 const struct dt_type **type);

/* The name the type was asked by. */
const char *dt_type_name(const struct dt_type *type);
/* sizeof in bytes, or -MD_E_NOTYPES when DWARF gives no size. */
int dt_sizeof(const struct dt_type *type);
/*
 * Byte offset of a member of a struct or union: direct members, and the
 * members of anonymous struct/union members (as C lets one name them).
 * Returns the offset (>= 0) or -MD_E_NOSYM without a message.
 */
int dt_field_offset(const struct dt_type *type, const char *field);

/* ---- type provider: Open MPI layouts from its installed headers ---- */

/* Where Debian's libopenmpi-dev installs the headers. */
#define DT_OMPI_INCDIR "/usr/lib/x86_64-linux-gnu/openmpi/include"

/*
 * Compile the type provider (collector/typeprov/ompi_types.c and
 * peruse.h, compiled into the binary by scripts/embed.sh) with
 * "cc -g -c" against the Open MPI headers in incdir (the user's
 * MD_OMPI_INCDIR; NULL: DT_OMPI_INCDIR) into cache_dir (NULL:
 * $XDG_CACHE_HOME/mpi-deadlock or ~/.cache/mpi-deadlock).  The object is
 * named by a hash of the provider source, the headers' path, size and
 * mtime, so it is built once and reused.  Returns 0, *obj_path and *how
 * ("type provider compiled from Open MPI 4.1.4 headers (<incdir>) into
 * <obj>"; both owned by the caller), or -MD_E_NOTYPES after reporting
 * the cause (no headers, no compiler, headers that do not compile, a
 * cache folder that cannot be written) and its fix.
 */
int dt_provider_build(const char *cache_dir, const char *incdir,
		      char **obj_path, char **how);

/*
 * What is missing in the headers folder incdir (given: it is the user's
 * MD_OMPI_INCDIR, else the default place) for the type providers, as the
 * message that names it and the fix (malloc'ed); NULL when mpi.h and
 * openmpi/ompi_config.h are there.
 */
char *dt_headers_missing(const char *incdir, bool given);

/*
 * Types for an Open MPI libmpi: dt_index_open on libmpi_path, and when it
 * has no DWARF and no debug file, the type provider (dt_provider_build
 * with cache_dir and incdir).  Returns 0 and *out (its
 * dt_index_source says which of the three it was), or -MD_E_NOTYPES after
 * reporting once what was tried and how to fix it.
 */
int dt_index_open_mpi(const char *libmpi_path, const char *cache_dir,
		      const char *incdir, struct dt_index **out);

/* ---- the ob1 provider: ob1's layouts from the build's own sources ---- */

/* Where scripts/build-openmpi.sh unpacks 'apt-get source openmpi', and
 * ob1's folder in a source tree. */
#define DT_OMPI_SRCROOT "/var/cache/mpi-deadlock/src"
#define DT_OB1_DIR "ompi/mca/pml/ob1"

/*
 * Debian installs neither ob1's headers nor its DWARF: compile the ob1
 * type provider (collector/typeprov/ob1_types.c) with -g against the
 * installed headers (incdir as for dt_provider_build: their config
 * headers are the build's) and, for ob1's own headers, the Open MPI
 * source tree srcdir of the same version (the user's MD_OMPI_SRCDIR;
 * NULL: DT_OMPI_SRCROOT/openmpi-<version of the headers>).  Built once into
 * cache_dir, named by a hash of the provider, the headers and the ob1
 * sources.  Returns 0, *obj_path and *how (the caller's); or
 * -MD_E_NOTYPES and *why (the caller's) saying what is missing and the
 * fix: the caller says it once, the DLL's view stays.
 */
int dt_provider_build_ob1(const char *cache_dir, const char *incdir,
			  const char *srcdir, char **obj_path, char **how,
			  char **why);

/*
 * Types for ob1's plug-in (mca_pml_ob1.so): its own DWARF or debug file,
 * else the ob1 type provider (dt_provider_build_ob1 with cache_dir,
 * incdir and srcdir).  Returns 0 and *out (dt_index_source says
 * which), or -MD_E_NOTYPES and *why as dt_provider_build_ob1 (or
 * -MD_E_INPUT, reported, for unreadable DWARF).
 */
int dt_index_open_ob1(const char *plugin, const char *cache_dir,
		      const char *incdir, const char *srcdir,
		      struct dt_index **out, char **why);

#endif /* MD_DWTYPES_H */
