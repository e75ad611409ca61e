/*
 * target_cache.c - the pages of a stopped process, read once (see
 * target_int.h).
 *
 * The MQD DLL, ob1's walk and the topology read a rank's memory a few
 * bytes at a time: about 170 reads per rank, mostly in the same dozen
 * pages (the communicator array, the request free lists, the heap around
 * the communicators).  Each read is one process_vm_readv, and in a
 * virtual machine every system call costs microseconds; a whole page
 * costs little more than a word.  While every thread is stopped the
 * memory cannot change, so each page is read once per look.
 */
#include <stdlib.h>
#include <string.h>

#include "md.h"
#include "target_int.h"

#define TC_PAGE 4096
#define TC_SLOTS 64	/* hash chains; a rank's read touches 20-40 pages */
/* Longer reads (a DLL's string table, a stack of pages) go directly. */
#define TC_MAX_READ (2 * TC_PAGE)

struct tc_page {
	uint64_t addr;
	struct tc_page *next;
	bool unreadable;	/* the page faults: the DLL probes such */
	unsigned char data[TC_PAGE];
};

struct tgt_cache {
	struct tc_page *slot[TC_SLOTS];
};

struct tgt_cache *tgt_cache_new(void)
{
	return xcalloc(1, sizeof(struct tgt_cache));
}

void tgt_cache_free(struct tgt_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < TC_SLOTS; i++) {
		struct tc_page *p = c->slot[i], *next;

		for (; p; p = next) {
			next = p->next;
			free(p);
		}
	}
	free(c);
}

static struct tc_page *page_get(struct tgt_cache *c, struct tgt *t,
				const struct tgt_ops *ops, uint64_t base)
{
	struct tc_page **head = &c->slot[(base / TC_PAGE) % TC_SLOTS], *p;

	for (p = *head; p; p = p->next)
		if (p->addr == base)
			return p;
	p = xmalloc(sizeof(*p));
	p->addr = base;
	p->unreadable = ops->read(t, base, p->data, TC_PAGE) < 0;
	p->next = *head;
	*head = p;
	return p;
}

int tgt_cache_read(struct tgt_cache *c, struct tgt *t,
		   const struct tgt_ops *ops, uint64_t addr, void *buf,
		   size_t len)
{
	uint64_t end = addr + len, a = addr;
	unsigned char *out = buf;

	if (len > TC_MAX_READ || end < addr)
		return ops->read(t, addr, buf, len);
	while (a < end) {
		uint64_t base = a & ~(uint64_t)(TC_PAGE - 1);
		size_t off = (size_t)(a - base), n = TC_PAGE - off;
		struct tc_page *p = page_get(c, t, ops, base);

		/* A page that cannot be read whole (a fake's short region;
		 * a page that went away) is left to the read itself, which
		 * sorts the error as the caller expects. */
		if (p->unreadable)
			return ops->read(t, addr, buf, len);
		if (n > end - a)
			n = (size_t)(end - a);
		memcpy(out, p->data + off, n);
		out += n;
		a += n;
	}
	return 0;
}
