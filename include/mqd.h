/*
 * mqd.h - the MPI message queue dumping (MQD) interface, as this project
 * speaks it.
 *
 * Written from the published interface description (J. Cownie's
 * "MPI Message Queue Dumping" and the MPI Forum drafts in shared/seeds).
 * The names carry this project's prefix; the values and the struct
 * layouts are the ABI of the debug DLL that an MPI library ships and must
 * match it byte for byte (LP64: mqs_taddr_t is unsigned long, mqs_tword_t
 * long).  tests/mqd_abi_test.c checks the layouts, against Open MPI's own
 * header when its source is in the cache.
 *
 * The DLL's entry points keep their ABI names (mqs_*); they are looked up
 * with dlsym by name, never declared here.
 */
#ifndef MD_MQD_H
#define MD_MQD_H

#include <stddef.h>

/* Interface compatibility level of an MPI-1 DLL (no spawn support). */
enum { MQD_INTERFACE_COMPATIBILITY = 2 };

typedef unsigned long mqd_taddr_t;	/* a target address */
typedef long mqd_tword_t;		/* a target word */

/* Opaque handles.  The DLL keeps its own data behind the *_info ones;
 * the tool defines the others. */
typedef struct mqd_image_info mqd_image_info;
typedef struct mqd_process_info mqd_process_info;
typedef struct mqd_image mqd_image;
typedef struct mqd_process mqd_process;
typedef struct mqd_type mqd_type;

/* Sizes of target types.  Open MPI's DLL fills and reads all seven
 * fields; MPICH's struct stops after pointer_size. */
struct mqd_target_type_sizes {
	int short_size;
	int int_size;
	int long_size;
	int long_long_size;
	int pointer_size;
	int bool_size;
	int size_t_size;
};

/* Result codes. */
enum {
	MQD_OK = 0,
	MQD_NO_INFORMATION = 1,
	MQD_END_OF_LIST = 2,
	MQD_FIRST_USER_CODE = 100,
};

enum mqd_lang_code {
	MQD_LANG_C = 'c',
	MQD_LANG_CPLUS = 'C',
	MQD_LANG_F77 = 'f',
	MQD_LANG_F90 = 'F',
};

/* The queues of a communicator. */
enum mqd_op_class {
	MQD_PENDING_SENDS = 0,
	MQD_PENDING_RECEIVES = 1,
	MQD_UNEXPECTED_MESSAGES = 2,
};

enum { MQD_INVALID_PROCESS = -1 };

enum mqd_status {
	MQD_ST_PENDING = 0,
	MQD_ST_MATCHED = 1,
	MQD_ST_COMPLETE = 2,
};

struct mqd_communicator {
	mqd_taddr_t unique_id;	/* Open MPI: the context id, not unique
				 * across a split */
	mqd_tword_t local_rank;
	mqd_tword_t size;
	char name[64];
};

struct mqd_pending_operation {
	/* Fields for all messages */
	int status;			/* enum mqd_status */
	mqd_tword_t desired_local_rank;	/* -1 for any */
	mqd_tword_t desired_global_rank;
	int tag_wild;
	mqd_tword_t desired_tag;
	mqd_tword_t desired_length;
	int system_buffer;
	mqd_taddr_t buffer;
	/* Valid if status >= matched or for a send */
	mqd_tword_t actual_local_rank;
	mqd_tword_t actual_global_rank;
	mqd_tword_t actual_tag;
	mqd_tword_t actual_length;
	/* Free text, shown until the first empty line. */
	char extra_text[5][64];
};

/* Callbacks the tool gives the DLL. */
typedef void (*mqd_put_image_info_ft)(mqd_image *, mqd_image_info *);
typedef mqd_image_info *(*mqd_get_image_info_ft)(mqd_image *);
typedef mqd_image *(*mqd_get_image_ft)(mqd_process *);
typedef int (*mqd_get_global_rank_ft)(mqd_process *);
typedef int (*mqd_find_function_ft)(mqd_image *, char *, enum mqd_lang_code,
				    mqd_taddr_t *);
typedef int (*mqd_find_symbol_ft)(mqd_image *, char *, mqd_taddr_t *);
typedef void (*mqd_put_process_info_ft)(mqd_process *, mqd_process_info *);
typedef mqd_process_info *(*mqd_get_process_info_ft)(mqd_process *);
typedef void *(*mqd_malloc_ft)(size_t);
typedef void (*mqd_free_ft)(void *);
typedef mqd_type *(*mqd_find_type_ft)(mqd_image *, char *,
				      enum mqd_lang_code);
typedef int (*mqd_field_offset_ft)(mqd_type *, char *);
typedef int (*mqd_sizeof_ft)(mqd_type *);
typedef void (*mqd_get_type_sizes_ft)(mqd_process *,
				      struct mqd_target_type_sizes *);
typedef int (*mqd_fetch_data_ft)(mqd_process *, mqd_taddr_t, int, void *);
typedef void (*mqd_target_to_host_ft)(mqd_process *, const void *, void *,
				      int);
typedef void (*mqd_dprints_ft)(const char *);
typedef char *(*mqd_errorstring_ft)(int);

struct mqd_basic_callbacks {
	mqd_malloc_ft malloc_fp;
	mqd_free_ft free_fp;
	mqd_dprints_ft dprints_fp;
	mqd_errorstring_ft errorstring_fp;
	mqd_put_image_info_ft put_image_info_fp;
	mqd_get_image_info_ft get_image_info_fp;
	mqd_put_process_info_ft put_process_info_fp;
	mqd_get_process_info_ft get_process_info_fp;
};

struct mqd_image_callbacks {
	mqd_get_type_sizes_ft get_type_sizes_fp;
	mqd_find_function_ft find_function_fp;
	mqd_find_symbol_ft find_symbol_fp;
	mqd_find_type_ft find_type_fp;
	mqd_field_offset_ft field_offset_fp;
	mqd_sizeof_ft sizeof_fp;
};

struct mqd_process_callbacks {
	mqd_get_global_rank_ft get_global_rank_fp;
	mqd_get_image_ft get_image_fp;
	mqd_fetch_data_ft fetch_data_fp;
	mqd_target_to_host_ft target_to_host_fp;
};

/* The DLL's entry points, by their exported names. */
typedef void (*mqd_setup_basic_callbacks_fn)(const struct mqd_basic_callbacks *);
typedef char *(*mqd_version_string_fn)(void);
typedef int (*mqd_version_compatibility_fn)(void);
typedef int (*mqd_dll_taddr_width_fn)(void);
typedef char *(*mqd_dll_error_string_fn)(int);
typedef int (*mqd_setup_image_fn)(mqd_image *, const struct mqd_image_callbacks *);
typedef int (*mqd_image_has_queues_fn)(mqd_image *, char **);
typedef void (*mqd_destroy_image_info_fn)(mqd_image_info *);
typedef int (*mqd_setup_process_fn)(mqd_process *, const struct mqd_process_callbacks *);
typedef void (*mqd_destroy_process_info_fn)(mqd_process_info *);
typedef int (*mqd_process_has_queues_fn)(mqd_process *, char **);
typedef int (*mqd_update_communicator_list_fn)(mqd_process *);
typedef int (*mqd_setup_communicator_iterator_fn)(mqd_process *);
typedef int (*mqd_get_communicator_fn)(mqd_process *, struct mqd_communicator *);
typedef int (*mqd_get_comm_group_fn)(mqd_process *, int *);
typedef int (*mqd_next_communicator_fn)(mqd_process *);
typedef int (*mqd_setup_operation_iterator_fn)(mqd_process *, int);
typedef int (*mqd_next_operation_fn)(mqd_process *, struct mqd_pending_operation *);

#endif /* MD_MQD_H */
