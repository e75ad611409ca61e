/*
 * manifest.h - samples/manifest (format documented at its top): what
 * each sample run must show, for tests/e2e_test.c.
 */
#ifndef MD_TEST_MANIFEST_H
#define MD_TEST_MANIFEST_H

#include <stdbool.h>

/* One "stuck RANKS CALL FILE:LINE" line, one entry per rank; for
 * "stuckon SETUP RANKS CALL FILE:LINE", setup (else NULL). */
struct mf_stuck {
	char *setup;
	int rank;
	char *call;
	char *file;
	int line;
};

/* One "unmatched RANK FROM TAG" line. */
struct mf_unmatched {
	int rank, from, tag;
};

struct mf_sample {
	char *name;		/* test name */
	char *source;		/* "ring.c" */
	char *binary;		/* "ring" */
	int np;
	bool deadlock;
	int markers;
	bool *deadlocked;	/* np flags */
	bool has_behind;
	bool *behind;		/* np flags, all false without a behind line */
	int nstuck;
	struct mf_stuck *stuck;
	int noutput;
	char **output;		/* expected stdout lines */
	char *topology;		/* "cart 3,1;0,2": a communicator of the
				 * snapshot has it, NULL if not asked */
	/* libmdtrack.so: run with it ("track", or any of the next two). */
	bool track;
	int nposted;		/* "posted RANKS CALL FILE:LINE" */
	struct mf_stuck *posted;
	int ndisagree;		/* "disagree TEXT" */
	char **disagree;
	int nunmatched;
	struct mf_unmatched *unmatched;
	/* "notfor SETUP REASON": not run on that setup (e.g. mpich), and
	 * why (its behaviour is another MPI's). */
	int nnotfor;
	char **notfor_setup, **notfor_reason;
	int lineno;		/* of the "sample" line */
};

struct mf_manifest {
	int nsamples;
	struct mf_sample *samples;
};

/*
 * Read the manifest at path.  Returns 0 and *out (mf_free) or
 * -MD_E_INPUT / -MD_E_SYS after one md_error naming path:line.
 */
int mf_load(const char *path, struct mf_manifest **out);
void mf_free(struct mf_manifest *m);

/* The sample named name, or NULL; borrowed from m. */
const struct mf_sample *mf_find(const struct mf_manifest *m, const char *name);

/* The reason the sample is not run on setup ("notfor"), or NULL. */
const char *mf_notfor(const struct mf_sample *s, const char *setup);

/*
 * Parse a rank set "0-3,5" into flags set[0..np-1] (cleared first).
 * Returns 0, or -MD_E_INPUT on bad syntax or a rank outside [0, np).
 */
int mf_parse_ranks(const char *text, int np, bool *set);

/* Format flags as a rank set "0-3,5" into buf (always terminated). */
void mf_format_ranks(const bool *set, int np, char *buf, int size);

/*
 * The samples directory: $MD_SAMPLES, else ./samples if it holds a
 * manifest, else the parent of $MD_BUILD + /samples.  Newly allocated.
 */
char *mf_samples_dir(void);

#endif /* MD_TEST_MANIFEST_H */
