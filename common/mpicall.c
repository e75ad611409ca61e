/* mpicall.c - the table of MPI calls (mpicall.h) and its look-ups. */
#include "mpicall.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const struct md_call md_calls[] = {
#define MD_CALL_ENTRY(name, cls) { "MPI_" #name, MD_CALL_##cls },
	MD_MPI_CALLS(MD_CALL_ENTRY)
#undef MD_CALL_ENTRY
};

const int md_ncalls = (int)(sizeof(md_calls) / sizeof(md_calls[0]));

static int by_name(const void *key, const void *entry)
{
	return strcmp(key, ((const struct md_call *)entry)->name);
}

/*
 * The analysis asks about every rank's call several times, and the names
 * are interned: a look-up remembers its entry by the name's address, per
 * thread.  An address can be reused for another name, so a remembered
 * entry is taken only when its name is still the same (one strcmp, where
 * the search takes about nine).
 */
enum md_call_class md_call_class(const char *name)
{
	static __thread struct {
		const char *name;
		const struct md_call *c;
	} memo[64];
	const struct md_call *c;
	unsigned h;

	if (!name)
		return MD_CALL_NONE;
	h = (unsigned)((uintptr_t)name >> 3) % 64;
	if (memo[h].name == name && strcmp(name, memo[h].c->name) == 0)
		return memo[h].c->cls;
	c = bsearch(name, md_calls, (size_t)md_ncalls, sizeof(md_calls[0]),
		    by_name);
	if (c) {
		memo[h].name = name;
		memo[h].c = c;
	}
	return c ? c->cls : MD_CALL_NONBLOCKING;
}

bool md_call_known(const char *name)
{
	return name && bsearch(name, md_calls, (size_t)md_ncalls,
			       sizeof(md_calls[0]), by_name) != NULL;
}

const char *md_call_class_text(enum md_call_class cls)
{
	static const char *const texts[] = {
#define MD_CALL_CLASS_TEXT(name, text) text,
		MD_CALL_CLASSES(MD_CALL_CLASS_TEXT)
#undef MD_CALL_CLASS_TEXT
	};

	return (unsigned)cls < MD_CALL_NCLASSES ? texts[cls] : "?";
}

bool md_call_blocks(enum md_call_class cls)
{
	return cls != MD_CALL_NONE && cls != MD_CALL_NONBLOCKING &&
	       cls != MD_CALL_POLL;
}

bool md_call_on_requests(enum md_call_class cls)
{
	return cls == MD_CALL_WAIT || cls == MD_CALL_WAITALL ||
	       cls == MD_CALL_WAITANY || cls == MD_CALL_POLL;
}

bool md_call_collective(enum md_call_class cls)
{
	return cls == MD_CALL_COLL || cls == MD_CALL_NEIGHBOR ||
	       cls == MD_CALL_CREATE || cls == MD_CALL_RMA_FENCE ||
	       cls == MD_CALL_FINALIZE;
}
