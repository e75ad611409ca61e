/*
 * snapread_fuzz.c - fuzz harness for snap_read() (libFuzzer interface;
 * AFL++ links it with its driver too).  Built and run by scripts/fuzz.sh.
 *
 * Whatever the bytes, snap_read must return 0 with a snapshot or
 * -MD_E_INPUT without one, never crash, never leak (LeakSanitizer).  A
 * snapshot that reads must also write and read back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "md.h"
#include "snap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap *s = NULL, *back = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f, *mem;
	int ret;

	/* A regular file, like the real use: its size bounds the counts. */
	f = tmpfile();
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	rewind(f);
	ret = snap_read(f, "fuzz", &s);
	fclose(f);
	if (ret != 0 && ret != -MD_E_INPUT)
		abort();
	if (ret)
		return 0;
	mem = open_memstream(&text, &len);
	if (snap_write(s, mem) != 0)
		abort();
	fclose(mem);
	f = fmemopen(text, len, "r");
	if (!f || snap_read(f, "fuzz-back", &back) != 0)
		abort();
	fclose(f);
	if (back->nranks != s->nranks || back->ncomms != s->ncomms)
		abort();
	snap_free(back);
	snap_free(s);
	free(text);
	return 0;
}
