/*
 * elf_fixture.h - build real ELF files at test time: a temp folder, C
 * sources compiled with the system cc, helpers to run and read output.
 * For the elfsym, dwtypes and dwlines tests.
 */
#ifndef MD_TEST_ELF_FIXTURE_H
#define MD_TEST_ELF_FIXTURE_H

#include <stddef.h>

/* A fresh folder under $TMPDIR (or /tmp); owned by the caller, free with
 * ef_rmtree (which also frees the string). Aborts the test on failure. */
char *ef_tmpdir(void);
void ef_rmtree(char *dir);

/* Write text to dir/name; returns the path (caller frees). */
char *ef_write(const char *dir, const char *name, const char *text);

/*
 * Compile the C text src into dir/out with "cc <flags> -o dir/out
 * dir/out.c <extra>" (extra may be NULL: appended after the source, for
 * libraries to link).  Returns the path of the output (caller frees), or
 * NULL when cc fails (its output went to stderr).
 */
char *ef_cc(const char *dir, const char *out, const char *src,
	    const char *flags, const char *extra);

/* Run a shell command; returns its exit status, or -1. */
int ef_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command and return its whole standard output (caller frees),
 * or NULL when it exits non-zero. */
char *ef_output(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether a file exists. */
int ef_exists(const char *path);

/* The source-built Open MPI's prefix when its build is finished
 * (/var/cache/mpi-deadlock/openmpi-4.1.4-g, or $MD_OMPI_G), else NULL. */
const char *ef_ompi_g_prefix(void);

#endif /* MD_TEST_ELF_FIXTURE_H */
