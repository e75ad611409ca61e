/*
 * mqdhost.c - load the MPI library's message-queue DLL and answer its
 * callbacks.
 *
 * The DLL calls back with only an image or a process handle and keeps no
 * thread of its own, so the host keeps "the process being read" in the
 * dll object for the image-level callbacks (find_symbol is called from
 * mqs_setup_process with only the image: Open MPI's DLL resolves
 * per-process addresses through it).
 */
#include "mqdhost.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md.h"
#include "mqd.h"
#include "mqd_mpich.h"

struct mh_entry {
	mqd_setup_basic_callbacks_fn setup_basic_callbacks;
	mqd_version_string_fn version_string;
	mqd_version_compatibility_fn version_compatibility;
	mqd_dll_taddr_width_fn dll_taddr_width;
	mqd_dll_error_string_fn dll_error_string;
	mqd_setup_image_fn setup_image;
	mqd_image_has_queues_fn image_has_queues;
	mqd_destroy_image_info_fn destroy_image_info;
	mqd_setup_process_fn setup_process;
	mqd_destroy_process_info_fn destroy_process_info;
	mqd_process_has_queues_fn process_has_queues;
	mqd_update_communicator_list_fn update_communicator_list;
	mqd_setup_communicator_iterator_fn setup_communicator_iterator;
	mqd_get_communicator_fn get_communicator;
	mqd_get_comm_group_fn get_comm_group;	/* optional */
	mqd_next_communicator_fn next_communicator;
	mqd_setup_operation_iterator_fn setup_operation_iterator;
	mqd_next_operation_fn next_operation;
};

/* A type handle given to the DLL. */
struct mh_type {
	struct mh_image *img;
	void *type;
	char *name;
	struct mh_type *next;
};

/* What the DLL sees as mqd_process. */
struct mh_process {
	struct mh_image *img;
	const struct mh_proc_ops *ops;
	void *ctx;
	int global_rank;
	mqd_process_info *info;
	bool gone;		/* a read found the process gone */
};

struct mh_image {
	struct mh_dll *dll;
	char *name;
	const struct mh_types_ops *types;
	void *types_ctx;
	mqd_image_info *info;
	struct mh_type *type_list;
	/* Open MPI request fields the host reads itself, -1 if unknown. */
	int req_complete_off;
	int req_sequence_off;
	/* Lookups the DLL made that failed, while it set up the image. */
	int missing_types;
	char *first_missing;
	/* MPICH: what the host reads of its communicators itself. */
	bool mpich_ok;
	struct mm_layout mpich;
};

struct mh_dll {
	char *path;
	char *version;
	enum mh_impl impl;
	void *handle;
	struct mh_entry e;
	struct mh_process *current;	/* the process being read */
};

/* The DLL's basic callbacks carry no context: the process being read is
 * reached through the image or process handle, never through a global. */

/* Filled with -1 bytes: Open MPI's DLL leaves a group member it cannot
 * match unwritten, which then reads as rank -1, never as a plausible
 * rank from old heap contents. */
static void *cb_malloc(size_t n)
{
	return memset(xmalloc(n), 0xff, n);
}

static void cb_free(void *p)
{
	free(p);
}

static void cb_dprints(const char *text)
{
	md_info("DLL: %s", text);
}

static char *cb_errorstring(int code)
{
	/* The DLL asks the debugger for texts of the debugger's own codes;
	 * ours are never passed to it. */
	(void)code;
	return (char *)"debugger error";
}

static void cb_put_image_info(mqd_image *image, mqd_image_info *info)
{
	((struct mh_image *)image)->info = info;
}

static mqd_image_info *cb_get_image_info(mqd_image *image)
{
	return ((struct mh_image *)image)->info;
}

static void cb_put_process_info(mqd_process *process, mqd_process_info *info)
{
	((struct mh_process *)process)->info = info;
}

static mqd_process_info *cb_get_process_info(mqd_process *process)
{
	return ((struct mh_process *)process)->info;
}

static const struct mqd_basic_callbacks mh_basic = {
	.malloc_fp = cb_malloc,
	.free_fp = cb_free,
	.dprints_fp = cb_dprints,
	.errorstring_fp = cb_errorstring,
	.put_image_info_fp = cb_put_image_info,
	.get_image_info_fp = cb_get_image_info,
	.put_process_info_fp = cb_put_process_info,
	.get_process_info_fp = cb_get_process_info,
};

/* Image callbacks. */

static void cb_get_type_sizes(mqd_process *process,
			      struct mqd_target_type_sizes *ts)
{
	struct mh_process *p = (struct mh_process *)process;

	/* The target is this machine's own ABI, LP64.  The published
	 * struct (and MPICH's, inside its process info) has five ints;
	 * Open MPI added bool and size_t.  Writing seven into MPICH's
	 * overwrites the field after it: only Open MPI gets seven. */
	ts->short_size = sizeof(short);
	ts->int_size = sizeof(int);
	ts->long_size = sizeof(long);
	ts->long_long_size = sizeof(long long);
	ts->pointer_size = sizeof(void *);
	/* A NULL process names no DLL: five, the published struct. */
	if (!p || p->img->dll->impl != MH_IMPL_OMPI)
		return;
	ts->bool_size = sizeof(_Bool);
	ts->size_t_size = sizeof(size_t);
}

static int lookup_current(mqd_image *image, const char *name,
			  mqd_taddr_t *addr)
{
	struct mh_image *img = (struct mh_image *)image;
	struct mh_process *p = img->dll->current;
	uint64_t a;

	/* Open MPI asks for "MPIR_Ignore_queues" with a NULL out-pointer
	 * and gives up silently unless it is "not found". */
	if (!p || p->ops->lookup(p->ctx, name, &a) < 0)
		return MQD_FIRST_USER_CODE;
	if (addr)
		*addr = (mqd_taddr_t)a;
	return MQD_OK;
}

static int cb_find_function(mqd_image *image, char *name,
			    enum mqd_lang_code lang, mqd_taddr_t *addr)
{
	(void)lang;
	return lookup_current(image, name, addr);
}

static int cb_find_symbol(mqd_image *image, char *name, mqd_taddr_t *addr)
{
	return lookup_current(image, name, addr);
}

static mqd_type *cb_find_type(mqd_image *image, char *name,
			      enum mqd_lang_code lang)
{
	struct mh_image *img = (struct mh_image *)image;
	struct mh_type *t;
	void *type;

	(void)lang;
	for (t = img->type_list; t; t = t->next)
		if (!strcmp(t->name, name))
			return (mqd_type *)t;
	if (img->types->find(img->types_ctx, name, &type) < 0) {
		md_info("DLL asked for type %s: not found", name);
		if (!img->missing_types++)
			img->first_missing = xstrdup(name);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->img = img;
	t->type = type;
	t->name = xstrdup(name);
	t->next = img->type_list;
	img->type_list = t;
	return (mqd_type *)t;
}

static int cb_field_offset(mqd_type *type, char *field)
{
	struct mh_type *t = (struct mh_type *)type;
	int off = t->img->types->offset(t->img->types_ctx, t->type, field);

	if (off < 0)
		md_info("DLL asked for field %s.%s: not found", t->name, field);
	return off;
}

static int cb_sizeof(mqd_type *type)
{
	struct mh_type *t = (struct mh_type *)type;

	return t->img->types->size(t->img->types_ctx, t->type);
}

static const struct mqd_image_callbacks mh_image_cbs = {
	.get_type_sizes_fp = cb_get_type_sizes,
	.find_function_fp = cb_find_function,
	.find_symbol_fp = cb_find_symbol,
	.find_type_fp = cb_find_type,
	.field_offset_fp = cb_field_offset,
	.sizeof_fp = cb_sizeof,
};

/* Process callbacks. */

static int cb_get_global_rank(mqd_process *process)
{
	return ((struct mh_process *)process)->global_rank;
}

static mqd_image *cb_get_image(mqd_process *process)
{
	return (mqd_image *)((struct mh_process *)process)->img;
}

static int cb_fetch_data(mqd_process *process, mqd_taddr_t addr, int len,
			 void *buf)
{
	struct mh_process *p = (struct mh_process *)process;

	/* The DLL probes addresses that may be unmapped and expects a
	 * clean failure, never a fault. */
	int rc;

	if (len < 0)
		return MQD_FIRST_USER_CODE;
	rc = p->ops->read(p->ctx, addr, buf, (size_t)len);
	if (rc == -MD_E_GONE)
		p->gone = true;
	if (rc < 0)
		return MQD_FIRST_USER_CODE;
	return MQD_OK;
}

static void cb_target_to_host(mqd_process *process, const void *in,
			      void *out, int len)
{
	(void)process;
	memcpy(out, in, (size_t)len);
}

static const struct mqd_process_callbacks mh_process_cbs = {
	.get_global_rank_fp = cb_get_global_rank,
	.get_image_fp = cb_get_image,
	.fetch_data_fp = cb_fetch_data,
	.target_to_host_fp = cb_target_to_host,
};

/* Loading. */

static int check_writers(const char *path, const struct stat *st,
			 bool is_dir)
{
	if (!is_dir && !S_ISREG(st->st_mode)) {
		md_error("message-queue DLL %s is not a regular file: "
			 "give the DLL's path with --dll", path);
		return -MD_E_DLL;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		md_error("message-queue DLL: %s is owned by uid %u, neither root "
			 "nor you: refusing to load it (check it and pass it "
			 "with --dll to load it anyway)", path,
			 (unsigned)st->st_uid);
		return -MD_E_DLL;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(is_dir && (st->st_mode & S_ISVTX))) {
		md_error("message-queue DLL: %s is writable by other users: "
			 "refusing to load it (chmod go-w it, or pass the DLL "
			 "with --dll)", path);
		return -MD_E_DLL;
	}
	return 0;
}

/* Open the DLL file for reading; reports why not.  Returns fd or -1. */
static int open_dll(const char *path, bool explicit_choice)
{
	int fd;

	/* dlopen searches the library path for a name without '/', and a
	 * relative name would be checked against our own directory. */
	if (path[0] != '/' && !explicit_choice) {
		md_error("message-queue DLL name '%s' from the job is not an "
			 "absolute path: refusing it (give the DLL with --dll)",
			 path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		md_error("message-queue DLL %s: %s (is the MPI library's "
			 "debugger support installed? give the path with --dll)",
			 path, strerror(errno));
	return fd;
}

/* The checks of mh_dll_check, on the opened file and its folders. */
static int check_fd(const char *path, int fd, bool explicit_choice)
{
	char *dir, *slash;
	struct stat st;
	int err = 0;

	if (fstat(fd, &st) < 0) {
		md_error("fstat of message-queue DLL %s: %s", path,
			 strerror(errno));
		return -MD_E_DLL;
	}
	if (explicit_choice) {
		if (S_ISREG(st.st_mode))
			return 0;
		return check_writers(path, &st, false);
	}
	err = check_writers(path, &st, false);
	dir = xstrdup(path);
	while (!err && (slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) == 0)
			err = check_writers(dir, &st, true);
	}
	free(dir);
	return err;
}

int mh_dll_check(const char *path, bool explicit_choice)
{
	int fd = open_dll(path, explicit_choice), err;

	if (fd < 0)
		return -MD_E_DLL;
	err = check_fd(path, fd, explicit_choice);
	close(fd);
	return err;
}

#define MH_SYM(dll, field, name, required)                                  \
	do {                                                                \
		*(void **)&(dll)->e.field = dlsym((dll)->handle, name);     \
		if (required && !(dll)->e.field) {                          \
			md_error("message-queue DLL %s does not export %s: "  \
				 "not an MQD library", (dll)->path, name);    \
			return -MD_E_DLL;                                   \
		}                                                           \
	} while (0)

static int resolve_entries(struct mh_dll *dll)
{
	MH_SYM(dll, setup_basic_callbacks, "mqs_setup_basic_callbacks", 1);
	MH_SYM(dll, version_string, "mqs_version_string", 1);
	MH_SYM(dll, version_compatibility, "mqs_version_compatibility", 1);
	MH_SYM(dll, dll_taddr_width, "mqs_dll_taddr_width", 1);
	MH_SYM(dll, dll_error_string, "mqs_dll_error_string", 1);
	MH_SYM(dll, setup_image, "mqs_setup_image", 1);
	MH_SYM(dll, image_has_queues, "mqs_image_has_queues", 1);
	MH_SYM(dll, destroy_image_info, "mqs_destroy_image_info", 1);
	MH_SYM(dll, setup_process, "mqs_setup_process", 1);
	MH_SYM(dll, destroy_process_info, "mqs_destroy_process_info", 1);
	MH_SYM(dll, process_has_queues, "mqs_process_has_queues", 1);
	MH_SYM(dll, update_communicator_list, "mqs_update_communicator_list", 1);
	MH_SYM(dll, setup_communicator_iterator,
	       "mqs_setup_communicator_iterator", 1);
	MH_SYM(dll, get_communicator, "mqs_get_communicator", 1);
	MH_SYM(dll, get_comm_group, "mqs_get_comm_group", 0);
	MH_SYM(dll, next_communicator, "mqs_next_communicator", 1);
	MH_SYM(dll, setup_operation_iterator, "mqs_setup_operation_iterator", 1);
	MH_SYM(dll, next_operation, "mqs_next_operation", 1);
	return 0;
}

static int check_interface(struct mh_dll *dll)
{
	int compat = dll->e.version_compatibility();
	int width = dll->e.dll_taddr_width();

	if (compat != MQD_INTERFACE_COMPATIBILITY && compat != 3) {
		md_error("message-queue DLL %s speaks interface version %d, "
			 "this tool version %d: incompatible (use the DLL of a "
			 "supported MPI, or give one with --dll)", dll->path,
			 compat, MQD_INTERFACE_COMPATIBILITY);
		return -MD_E_DLL;
	}
	if (width != (int)sizeof(mqd_taddr_t)) {
		md_error("message-queue DLL %s was built for %d-byte addresses, "
			 "this tool uses %zu: incompatible", dll->path, width,
			 sizeof(mqd_taddr_t));
		return -MD_E_DLL;
	}
	return 0;
}

/*
 * dlopen the file behind fd through /proc/self/fd: the file loaded is the
 * one opened (and checked), whatever is at path by now.  dlerror names
 * the fd path: say path instead.  Once loaded, the descriptor stays open
 * as long as the library (for ever: it is never dlclose()d): the dynamic
 * linker knows the library by that name, and a later load through the
 * same fd number would be taken for it.
 */
static void *dlopen_fd(const char *path, int fd)
{
	char name[64];
	const char *e;
	size_t n;
	void *h;

	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (h)
		return h;
	e = dlerror();
	n = strlen(name);
	if (e && !strncmp(e, name, n))
		e += n;
	else
		n = 0;
	md_error("cannot load message-queue DLL: %s%s (install the MPI "
		 "library's debugger support, or give one with --dll)",
		 n ? path : "", e ? e : "dlopen failed");
	return NULL;
}

static int open_checked(const char *path, int fd, bool check,
			bool explicit_choice, const struct mh_load_hooks *hooks,
			bool *loaded, struct mh_dll **out)
{
	struct mh_dll *dll;
	const char *v;
	int err;

	if (check) {
		err = check_fd(path, fd, explicit_choice);
		if (err)
			return err;
	}
	if (hooks && hooks->after_check)
		hooks->after_check(hooks->ctx);
	dll = xcalloc(1, sizeof(*dll));
	dll->path = xstrdup(path);
	dll->handle = dlopen_fd(path, fd);
	if (!dll->handle) {
		err = -MD_E_DLL;
		goto fail;
	}
	*loaded = true;
	err = resolve_entries(dll);
	if (!err)
		err = check_interface(dll);
	if (err)
		goto fail;
	v = dll->e.version_string();
	dll->version = xstrdup(v ? v : "unknown");
	dll->impl = mh_impl_guess(dll->version, path);
	dll->e.setup_basic_callbacks(&mh_basic);
	*out = dll;
	return 0;
fail:
	/* Never dlclose: a DLL that was loaded may keep state the interface
	 * says survives. */
	free(dll->path);
	free(dll);
	return err;
}

int mh_dll_load(const char *path, bool explicit_choice,
		const struct mh_load_hooks *hooks, struct mh_dll **out)
{
	int fd = open_dll(path, explicit_choice), err;
	bool loaded = false;

	if (fd < 0)
		return -MD_E_DLL;
	err = open_checked(path, fd, true, explicit_choice, hooks, &loaded,
			   out);
	if (!loaded)
		close(fd);
	return err;
}

int mh_dll_open(const char *path, struct mh_dll **out)
{
	int fd = open_dll(path, true), err;
	bool loaded = false;

	if (fd < 0)
		return -MD_E_DLL;
	err = open_checked(path, fd, false, true, NULL, &loaded, out);
	if (!loaded)
		close(fd);
	return err;
}

void mh_dll_free(struct mh_dll *dll)
{
	if (!dll)
		return;
	free(dll->path);
	free(dll->version);
	free(dll);
}

const char *mh_dll_version(const struct mh_dll *dll)
{
	return dll->version;
}

const char *mh_dll_path(const struct mh_dll *dll)
{
	return dll->path;
}

enum mh_impl mh_dll_impl(const struct mh_dll *dll)
{
	return dll->impl;
}

enum mh_impl mh_impl_guess(const char *version, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strstr(version, "MPICH") || !strncmp(base, "libtvmpich", 10))
		return MH_IMPL_MPICH;
	if (strstr(version, "Open MPI") || !strncmp(base, "libompi_dbg_msgq", 16))
		return MH_IMPL_OMPI;
	return MH_IMPL_UNKNOWN;
}

const char *mh_impl_name(enum mh_impl impl)
{
	return impl == MH_IMPL_OMPI ? "Open MPI" :
	       impl == MH_IMPL_MPICH ? "MPICH" : NULL;
}

static const char *dll_err(struct mh_dll *dll, int code)
{
	const char *s = dll->e.dll_error_string(code);

	return s ? s : "unknown error";
}

/* Open MPI's request fields the host reads itself; see mh_collect. */
static void find_request_fields(struct mh_image *img)
{
	const struct mh_types_ops *t = img->types;
	void *type;

	img->req_complete_off = -1;
	img->req_sequence_off = -1;
	if (t->find(img->types_ctx, "ompi_request_t", &type) == 0)
		img->req_complete_off = t->offset(img->types_ctx, type,
						  "req_complete");
	if (t->find(img->types_ctx, "mca_pml_base_request_t", &type) == 0)
		img->req_sequence_off = t->offset(img->types_ctx, type,
						  "req_sequence");
}

int mh_image_new(struct mh_dll *dll, const char *name,
		 const struct mh_types_ops *types, void *types_ctx,
		 const struct mh_proc_ops *proc, void *proc_ctx,
		 struct mh_image **out)
{
	struct mh_image *img = xcalloc(1, sizeof(*img));
	struct mh_process p = { .img = img, .ops = proc, .ctx = proc_ctx };
	char *msg = NULL;
	int rc;

	img->dll = dll;
	img->name = xstrdup(name);
	img->types = types;
	img->types_ctx = types_ctx;
	dll->current = &p;
	rc = dll->e.setup_image((mqd_image *)img, &mh_image_cbs);
	if (rc == MQD_OK)
		rc = dll->e.image_has_queues((mqd_image *)img, &msg);
	dll->current = NULL;
	if (rc != MQD_OK) {
		md_error("message-queue DLL %s cannot read %s: %s (%s)",
			 dll->path, name, dll_err(dll, rc),
			 msg ? msg : "the MPI library's type information is "
				     "missing or does not match");
		mh_image_free(img);
		return -MD_E_NOTYPES;
	}
	/* MPICH's mqs_image_has_queues answers ok whatever it found, and
	 * then reads with offsets of -1. */
	if (img->missing_types) {
		md_error("message-queue DLL %s cannot read %s: the MPI library's "
			 "types lack %s (%d type(s) missing; is it the library "
			 "this DLL was built with, with its debug information?)",
			 dll->path, name, img->first_missing, img->missing_types);
		mh_image_free(img);
		return -MD_E_NOTYPES;
	}
	find_request_fields(img);
	if (dll->impl == MH_IMPL_MPICH)
		img->mpich_ok = mm_layout_find(types, types_ctx,
					       &img->mpich) == 0;
	*out = img;
	return 0;
}

void mh_image_free(struct mh_image *img)
{
	struct mh_type *t, *next;

	if (!img)
		return;
	if (img->info)
		img->dll->e.destroy_image_info(img->info);
	for (t = img->type_list; t; t = next) {
		next = t->next;
		free(t->name);
		free(t);
	}
	free(img->first_missing);
	free(img->name);
	free(img);
}

/* Walking the queues. */

/* Bounds against a corrupt list in a target caught mid-update. */
enum { MH_MAX_COMMS = 1 << 20, MH_MAX_OPS = 1 << 22 };

struct walk {
	struct mh_image *img;
	struct mh_process *p;
	struct snap *s;
	struct snap_rank *r;
	int cap_ops, cap_members;
};

/* Open MPI fetches ranks and tags as 32-bit values without sign
 * extension: MPI_ANY_SOURCE and MPI_ANY_TAG arrive as 4294967295. */
static int s32(mqd_tword_t v)
{
	return (int)(int32_t)(uint32_t)(uint64_t)v;
}

static uint64_t request_of(const struct snap_op *op)
{
	uint64_t req = 0;

	if (op->nextra < 1)
		return 0;
	if (sscanf(op->extra[0], "Send: 0x%" SCNx64, &req) == 1 ||
	    sscanf(op->extra[0], "Receive: 0x%" SCNx64, &req) == 1)
		return req;
	return 0;
}

/*
 * Open MPI's DLL reads one byte of ompi_request_t.req_complete; while a
 * request is waited on in MPI_Waitall/Waitany/Waitsome (or any wait under
 * MPI_THREAD_MULTIPLE) the field holds a pointer to the wait's sync
 * object, so the DLL says "complete".  The full word is 1 only when the
 * request really completed.  And it calls every receive whose status has
 * a tag "matched", also one whose message has all arrived (an MPI_Irecv
 * nobody waited for yet): complete, not a message in transfer.
 */
static void correct_status(struct walk *w, struct snap_op *op)
{
	uint64_t word;
	struct mh_process *p = w->p;

	if (op->request && w->img->req_sequence_off >= 0 &&
	    p->ops->read(p->ctx, op->request + w->img->req_sequence_off,
			 &word, sizeof(word)) == 0)
		op->sequence = word;
	if (op->status == SNAP_ST_PENDING || !op->request ||
	    w->img->req_complete_off < 0)
		return;
	if (p->ops->read(p->ctx, op->request + w->img->req_complete_off,
			 &word, sizeof(word)) < 0)
		return;
	if (op->status == SNAP_ST_COMPLETE && word != 1) {
		op->status = SNAP_ST_PENDING;
		op->status_corrected = true;
	} else if (op->status == SNAP_ST_MATCHED && word == 1) {
		op->status = SNAP_ST_COMPLETE;
	}
}

/* A DLL that gives a peer only as a local rank (MPICH's: global ranks are
 * always -1) is placed in MPI_COMM_WORLD through the group.  On an
 * intercommunicator the peer is a rank of the remote group, which Open
 * MPI's DLL translates through the local one: placed again. */
static void place_peers(const struct snap *s, int comm, struct snap_op *op)
{
	const struct snap_comm *c = &s->comms[comm];

	/* Outside the job (remote_size without remote): -1, where Open
	 * MPI's DLL gives a rank of the local group. */
	if (c->remote_size) {
		op->peer_global = snap_comm_peer(s, comm, op->peer_local);
		op->actual_global = snap_comm_peer(s, comm, op->actual_local);
		return;
	}
	if (!c->group)
		return;
	if (op->peer_global < 0 && op->peer_local >= 0 &&
	    op->peer_local < c->size)
		op->peer_global = c->group[op->peer_local];
	if (op->actual_global < 0 && op->actual_local >= 0 &&
	    op->actual_local < c->size)
		op->actual_global = c->group[op->actual_local];
}

/* A rank the snapshot can hold: an index (in the job: below size), or
 * -1.  A DLL fills the actual fields of a receive that has not matched
 * with whatever its status holds (MPICH's: MPI_ANY_SOURCE, -2), which
 * is no rank. */
static int rank_in(int rank, int size)
{
	return rank >= 0 && rank < size ? rank : -1;
}

static void keep_ranks(const struct snap *s, struct snap_op *op)
{
	/* A local peer past the group is kept (the reader takes it): it
	 * has no global rank, and the analyzer takes it as a peer that
	 * cannot be placed (inferred), not as "any source". */
	op->peer_local = rank_in(op->peer_local, INT_MAX);
	op->actual_local = rank_in(op->actual_local, INT_MAX);
	op->peer_global = rank_in(op->peer_global, s->nranks);
	op->actual_global = rank_in(op->actual_global, s->nranks);
}

static void add_op(struct walk *w, int cls, int comm,
		   const struct mqd_pending_operation *m)
{
	struct snap_rank *r = w->r;
	struct snap_op *op;
	int i;

	if (r->nops == w->cap_ops) {
		w->cap_ops = w->cap_ops ? 2 * w->cap_ops : 8;
		r->ops = xrealloc(r->ops, w->cap_ops * sizeof(*r->ops));
	}
	op = &r->ops[r->nops++];
	memset(op, 0, sizeof(*op));
	op->kind = cls == MQD_PENDING_SENDS      ? SNAP_OP_SEND
		   : cls == MQD_PENDING_RECEIVES ? SNAP_OP_RECV
						 : SNAP_OP_UNEXPECTED;
	op->status = m->status == MQD_ST_COMPLETE  ? SNAP_ST_COMPLETE
		     : m->status == MQD_ST_MATCHED ? SNAP_ST_MATCHED
						   : SNAP_ST_PENDING;
	op->comm = comm;
	op->peer_local = s32(m->desired_local_rank);
	op->peer_global = s32(m->desired_global_rank);
	if (op->peer_local < 0)
		op->peer_global = -1;
	op->any_tag = m->tag_wild || s32(m->desired_tag) == -1;
	op->tag = op->any_tag ? -1 : s32(m->desired_tag);
	op->length = (uint64_t)m->desired_length;
	op->buffer = m->buffer;
	op->system_buffer = m->system_buffer != 0;
	op->actual_local = s32(m->actual_local_rank);
	op->actual_global = s32(m->actual_global_rank);
	op->actual_tag = s32(m->actual_tag);
	op->actual_length = (uint64_t)m->actual_length;
	place_peers(w->s, comm, op);
	keep_ranks(w->s, op);
	if (w->img->dll->impl == MH_IMPL_MPICH) {
		/* MPICH's DLL gives the user's element count, not bytes, and
		 * -1 for a length it does not know. */
		op->count = op->length;
		op->length = 0;
		if ((int64_t)op->actual_length < 0)
			op->actual_length = 0;
	}
	for (i = 0; i < 5; i++) {
		size_t n = strnlen(m->extra_text[i], sizeof(m->extra_text[i]));
		char line[65];

		if (!n)
			break;
		memcpy(line, m->extra_text[i], n);
		line[n] = '\0';
		op->extra[op->nextra++] = snap_str(w->s, line);
	}
	op->request = request_of(op);
	correct_status(w, op);
}

static void walk_queue(struct walk *w, int comm, int cls)
{
	struct mh_entry *e = &w->img->dll->e;
	mqd_process *proc = (mqd_process *)w->p;
	struct mqd_pending_operation m;
	int rc, n = 0;

	rc = e->setup_operation_iterator(proc, cls);
	if (cls == MQD_UNEXPECTED_MESSAGES && rc != MQD_NO_INFORMATION)
		w->r->unexpected_available = true;
	if (rc != MQD_OK && rc != MQD_END_OF_LIST)
		return;
	for (;;) {
		/* Zeroed each time: for pending receives the DLL never
		 * writes the actual_* fields. */
		memset(&m, 0, sizeof(m));
		if (e->next_operation(proc, &m) != MQD_OK || ++n > MH_MAX_OPS)
			break;
		add_op(w, cls, comm, &m);
	}
}

static void add_member(struct walk *w, int comm, int local_rank)
{
	struct snap_rank *r = w->r;

	if (r->nmembers == w->cap_members) {
		w->cap_members = w->cap_members ? 2 * w->cap_members : 4;
		r->members = xrealloc(r->members,
				      w->cap_members * sizeof(*r->members));
	}
	r->members[r->nmembers].comm = comm;
	r->members[r->nmembers].local_rank = local_rank;
	r->nmembers++;
}

/* Open MPI's DLL can hand back a group with ranks from stale or freed
 * memory (seen for a cartesian communicator): a group is used only if
 * each entry is a rank of the job. */
static bool group_valid(const int *group, int size, int nranks)
{
	for (int i = 0; i < size; i++)
		if (group[i] < 0 || (nranks > 0 && group[i] >= nranks))
			return false;
	return true;
}

/*
 * MPICH's unique_id is the MPIR_Comm's address, a different number in
 * every rank: the communicator is named by its context id, and its group
 * read beside the DLL, which gives none.  Returns the group or NULL.
 * Of an intercommunicator the DLL gives the remote size and the table
 * read is the remote group's: it goes to *remote (*rsize), and c->size
 * and the group returned become the local group's.  A remote group of
 * another process group (spawned, connected) is *rsize without *remote.
 */
static int *mpich_comm(struct walk *w, struct mqd_communicator *c,
		       int **remote, int *rsize)
{
	int *group = xcalloc((size_t)c->size, sizeof(int)), *local, n, rc;
	struct mh_process *p = w->p;
	uint64_t addr = (uint64_t)c->unique_id, id;
	bool have;

	*remote = NULL;
	*rsize = 0;
	if (mm_comm_read(&w->img->mpich, p->ops, p->ctx, addr, (int)c->size,
			 &id, group, &have) == 0)
		c->unique_id = id;
	have = have && group_valid(group, (int)c->size, w->s->nranks);
	rc = mm_comm_local(&w->img->mpich, p->ops, p->ctx, addr, (int)c->size,
			   &n, &local);
	if (rc == 1 || rc == 2) {
		/* Outside the job: a size without a group. */
		if (have && rc == 1)
			*remote = group;
		else
			free(group);
		if (*remote || rc == 2)
			*rsize = (int)c->size;
		c->size = n;
		if (group_valid(local, n, w->s->nranks))
			return local;
		free(local);
		return NULL;
	}
	if (have)
		return group;
	free(group);
	return NULL;
}

/* The group from the MPI library's own structures, where the caller can
 * read them (Open MPI's DLL fails across hosts, see topo.h). */
static bool group_own(struct walk *w, const struct mqd_communicator *c,
		      int *group)
{
	const struct mh_proc_ops *ops = w->p->ops;

	return ops->comm_group &&
	       ops->comm_group(w->p->ctx, (uint64_t)c->unique_id,
			       (int)c->local_rank, (int)c->size, group) == 0 &&
	       group_valid(group, (int)c->size, w->s->nranks);
}

/* An intercommunicator's remote group, from the MPI library's own
 * structures (Open MPI's DLL knows only the local group). */
static void find_remote(struct walk *w, const struct mqd_communicator *c,
			int comm)
{
	const struct mh_proc_ops *ops = w->p->ops;
	int *remote = NULL, n = 0, rc;

	if (!ops->comm_remote)
		return;
	rc = ops->comm_remote(w->p->ctx, (uint64_t)c->unique_id,
			      (int)c->local_rank, (int)c->size, &remote, &n);
	if (rc == 1 && group_valid(remote, n, w->s->nranks))
		snap_comm_set_remote(w->s, comm, n, remote);
	else if (rc == 2)
		snap_comm_set_remote(w->s, comm, n, NULL);
	free(remote);
}

static void walk_communicator(struct walk *w)
{
	struct mh_entry *e = &w->img->dll->e;
	mqd_process *proc = (mqd_process *)w->p;
	struct mqd_communicator c;
	int *group = NULL, *remote = NULL, rsize = 0;
	int comm;

	memset(&c, 0, sizeof(c));
	if (e->get_communicator(proc, &c) != MQD_OK)
		return;
	/* MPI_COMM_NULL comes back with size 0. */
	if (c.size <= 0 || c.size > (1 << 26))
		return;
	c.name[sizeof(c.name) - 1] = '\0';
	/* MPICH's DLL names a communicator without a name so. */
	if (w->img->mpich_ok && !strcmp(c.name, "--unnamed--"))
		c.name[0] = '\0';
	if (w->img->mpich_ok) {
		group = mpich_comm(w, &c, &remote, &rsize);
	} else if (e->get_comm_group) {
		group = xcalloc((size_t)c.size, sizeof(int));
		if ((e->get_comm_group(proc, group) != MQD_OK ||
		     !group_valid(group, (int)c.size, w->s->nranks)) &&
		    !group_own(w, &c, group)) {
			free(group);
			group = NULL;
		}
	}
	comm = snap_comm_intern(w->s, (uint64_t)c.unique_id, c.name,
				(int)c.size, group);
	free(group);
	if (rsize)
		snap_comm_set_remote(w->s, comm, rsize, remote);
	else if (!w->img->mpich_ok)
		find_remote(w, &c, comm);
	free(remote);
	add_member(w, comm, (int)c.local_rank);
	walk_queue(w, comm, MQD_PENDING_SENDS);
	walk_queue(w, comm, MQD_PENDING_RECEIVES);
	walk_queue(w, comm, MQD_UNEXPECTED_MESSAGES);
}

static void no_queues(struct walk *w, int rc, const char *msg)
{
	w->r->queues = SNAP_QUEUES_NONE;
	w->r->queues_reason = snap_str(w->s, msg ? msg : dll_err(w->img->dll,
								rc));
}

static void walk_process(struct walk *w)
{
	struct mh_entry *e = &w->img->dll->e;
	mqd_process *proc = (mqd_process *)w->p;
	char *msg = NULL;
	int rc, n = 0;

	rc = e->setup_process(proc, &mh_process_cbs);
	if (rc != MQD_OK) {
		no_queues(w, rc, NULL);
		return;
	}
	rc = e->process_has_queues(proc, &msg);
	if (rc != MQD_OK) {
		no_queues(w, rc, msg);
		return;
	}
	/* The DLL's model of the communicators is refreshed before each
	 * walk, or communicators created since the last one are missed. */
	e->update_communicator_list(proc);
	rc = e->setup_communicator_iterator(proc);
	while (rc == MQD_OK && n++ < MH_MAX_COMMS) {
		walk_communicator(w);
		rc = e->next_communicator(proc);
	}
	w->r->queues = SNAP_QUEUES_OK;
}

int mh_collect(struct mh_image *img, const struct mh_proc_ops *proc,
	       void *proc_ctx, int global_rank, struct snap *s,
	       struct snap_rank *r)
{
	struct mh_process p = {
		.img = img, .ops = proc, .ctx = proc_ctx,
		.global_rank = global_rank,
	};
	struct walk w = { .img = img, .p = &p, .s = s, .r = r };

	r->nops = 0;
	r->nmembers = 0;
	r->unexpected_available = false;
	img->dll->current = &p;
	walk_process(&w);
	/* Set up afresh for every look: Open MPI's global rank translation
	 * goes stale when communicators appear. */
	if (p.info)
		img->dll->e.destroy_process_info(p.info);
	img->dll->current = NULL;
	return p.gone ? -MD_E_GONE : 0;
}
