/*
 * mpicall.h - the table of MPI calls, written once: every function that
 * Open MPI 4.1's mpi.h declares, with how it waits on other ranks.  The
 * collector (which call a stack is in) and the analyzer (what that call
 * waits on) both read it; tests/mpicall_test.c parses mpi.h and fails on
 * a function left out.
 *
 * The list is in strcmp order of the full name (LC_ALL=C sort), so that
 * md_call_class() can search it; the test checks the order too.  To add
 * a function, put X(Name_without_prefix, CLASS) at its place.
 */
#ifndef MD_MPICALL_H
#define MD_MPICALL_H

#include <stdbool.h>

/* How a call waits (DESIGN.md, "Wait-for semantics"). */
#define MD_CALL_CLASSES(X)                                                \
	X(NONE, "not in MPI")                                             \
	X(NONBLOCKING, "returns without waiting on another rank")         \
	X(POLL, "tests for completion and returns (MPI_Test, MPI_Iprobe):"\
		" non-blocking, but a loop of it may spin on a request")   \
	X(RECV, "waits for its receive")                                  \
	X(SEND, "waits for its send")                                     \
	X(SENDRECV, "waits for its send and its receive")                 \
	X(WAIT, "waits for one request")                                  \
	X(WAITALL, "waits for all its requests")                          \
	X(WAITANY, "waits for one of its requests (any, some)")           \
	X(PROBE, "waits for a matching message, posts no receive")        \
	X(COLL, "collective over the communicator")                       \
	X(NEIGHBOR, "collective over the topology neighbours")            \
	X(CREATE, "creates or frees a communicator, window or file: "     \
		  "collective over the communicator")                     \
	X(RMA_FENCE, "RMA synchronisation over the window's group")       \
	X(RMA_SYNC, "RMA synchronisation with some ranks of the window")  \
	X(FINALIZE, "MPI_Finalize: a collective on MPI_COMM_WORLD")

enum md_call_class {
#define MD_CALL_CLASS_ENUM(name, text) MD_CALL_##name,
	MD_CALL_CLASSES(MD_CALL_CLASS_ENUM)
#undef MD_CALL_CLASS_ENUM
	MD_CALL_NCLASSES
};

/*
 * Every function of mpi.h, by name without "MPI_".  MPI_Init and
 * MPI_Init_thread are non-blocking here: the tool attaches after the job
 * is set up, and a rank still in them waits on the runtime, not on a
 * rank's MPI state.
 */
#define MD_MPI_CALLS(X)                                                   \
	X(Abort, NONBLOCKING)                                           \
	X(Accumulate, NONBLOCKING)                                      \
	X(Add_error_class, NONBLOCKING)                                 \
	X(Add_error_code, NONBLOCKING)                                  \
	X(Add_error_string, NONBLOCKING)                                \
	X(Address, NONBLOCKING)                                         \
	X(Allgather, COLL)                                              \
	X(Allgatherv, COLL)                                             \
	X(Alloc_mem, NONBLOCKING)                                       \
	X(Allreduce, COLL)                                              \
	X(Alltoall, COLL)                                               \
	X(Alltoallv, COLL)                                              \
	X(Alltoallw, COLL)                                              \
	X(Attr_delete, NONBLOCKING)                                     \
	X(Attr_get, NONBLOCKING)                                        \
	X(Attr_put, NONBLOCKING)                                        \
	X(Barrier, COLL)                                                \
	X(Bcast, COLL)                                                  \
	X(Bsend, NONBLOCKING)                                            \
	X(Bsend_init, NONBLOCKING)                                      \
	X(Buffer_attach, NONBLOCKING)                                   \
	X(Buffer_detach, SEND)                                          \
	X(Cancel, NONBLOCKING)                                          \
	X(Cart_coords, NONBLOCKING)                                     \
	X(Cart_create, CREATE)                                          \
	X(Cart_get, NONBLOCKING)                                        \
	X(Cart_map, NONBLOCKING)                                        \
	X(Cart_rank, NONBLOCKING)                                       \
	X(Cart_shift, NONBLOCKING)                                      \
	X(Cart_sub, CREATE)                                             \
	X(Cartdim_get, NONBLOCKING)                                     \
	X(Close_port, NONBLOCKING)                                      \
	X(Comm_accept, CREATE)                                          \
	X(Comm_c2f, NONBLOCKING)                                        \
	X(Comm_call_errhandler, NONBLOCKING)                            \
	X(Comm_compare, NONBLOCKING)                                    \
	X(Comm_connect, CREATE)                                         \
	X(Comm_create, CREATE)                                          \
	X(Comm_create_errhandler, NONBLOCKING)                          \
	X(Comm_create_group, CREATE)                                    \
	X(Comm_create_keyval, NONBLOCKING)                              \
	X(Comm_delete_attr, NONBLOCKING)                                \
	X(Comm_disconnect, CREATE)                                      \
	X(Comm_dup, CREATE)                                             \
	X(Comm_dup_with_info, CREATE)                                   \
	X(Comm_f2c, NONBLOCKING)                                        \
	X(Comm_free, CREATE)                                            \
	X(Comm_free_keyval, NONBLOCKING)                                \
	X(Comm_get_attr, NONBLOCKING)                                   \
	X(Comm_get_errhandler, NONBLOCKING)                             \
	X(Comm_get_info, NONBLOCKING)                                   \
	X(Comm_get_name, NONBLOCKING)                                   \
	X(Comm_get_parent, NONBLOCKING)                                 \
	X(Comm_group, NONBLOCKING)                                      \
	X(Comm_idup, NONBLOCKING)                                       \
	X(Comm_join, CREATE)                                            \
	X(Comm_rank, NONBLOCKING)                                       \
	X(Comm_remote_group, NONBLOCKING)                               \
	X(Comm_remote_size, NONBLOCKING)                                \
	X(Comm_set_attr, NONBLOCKING)                                   \
	X(Comm_set_errhandler, NONBLOCKING)                             \
	X(Comm_set_info, NONBLOCKING)                                   \
	X(Comm_set_name, NONBLOCKING)                                   \
	X(Comm_size, NONBLOCKING)                                       \
	X(Comm_spawn, CREATE)                                           \
	X(Comm_spawn_multiple, CREATE)                                  \
	X(Comm_split, CREATE)                                           \
	X(Comm_split_type, CREATE)                                      \
	X(Comm_test_inter, NONBLOCKING)                                 \
	X(Compare_and_swap, NONBLOCKING)                                \
	X(Dims_create, NONBLOCKING)                                     \
	X(Dist_graph_create, CREATE)                                    \
	X(Dist_graph_create_adjacent, CREATE)                           \
	X(Dist_graph_neighbors, NONBLOCKING)                            \
	X(Dist_graph_neighbors_count, NONBLOCKING)                      \
	X(Errhandler_c2f, NONBLOCKING)                                  \
	X(Errhandler_create, NONBLOCKING)                               \
	X(Errhandler_f2c, NONBLOCKING)                                  \
	X(Errhandler_free, NONBLOCKING)                                 \
	X(Errhandler_get, NONBLOCKING)                                  \
	X(Errhandler_set, NONBLOCKING)                                  \
	X(Error_class, NONBLOCKING)                                     \
	X(Error_string, NONBLOCKING)                                    \
	X(Exscan, COLL)                                                 \
	X(Fetch_and_op, NONBLOCKING)                                    \
	X(File_c2f, NONBLOCKING)                                        \
	X(File_call_errhandler, NONBLOCKING)                            \
	X(File_close, CREATE)                                           \
	X(File_create_errhandler, NONBLOCKING)                          \
	X(File_delete, NONBLOCKING)                                     \
	X(File_f2c, NONBLOCKING)                                        \
	X(File_get_amode, NONBLOCKING)                                  \
	X(File_get_atomicity, NONBLOCKING)                              \
	X(File_get_byte_offset, NONBLOCKING)                            \
	X(File_get_errhandler, NONBLOCKING)                             \
	X(File_get_group, NONBLOCKING)                                  \
	X(File_get_info, NONBLOCKING)                                   \
	X(File_get_position, NONBLOCKING)                               \
	X(File_get_position_shared, NONBLOCKING)                        \
	X(File_get_size, NONBLOCKING)                                   \
	X(File_get_type_extent, NONBLOCKING)                            \
	X(File_get_view, NONBLOCKING)                                   \
	X(File_iread, NONBLOCKING)                                      \
	X(File_iread_all, NONBLOCKING)                                  \
	X(File_iread_at, NONBLOCKING)                                   \
	X(File_iread_at_all, NONBLOCKING)                               \
	X(File_iread_shared, NONBLOCKING)                               \
	X(File_iwrite, NONBLOCKING)                                     \
	X(File_iwrite_all, NONBLOCKING)                                 \
	X(File_iwrite_at, NONBLOCKING)                                  \
	X(File_iwrite_at_all, NONBLOCKING)                              \
	X(File_iwrite_shared, NONBLOCKING)                              \
	X(File_open, CREATE)                                            \
	X(File_preallocate, COLL)                                       \
	X(File_read, NONBLOCKING)                                       \
	X(File_read_all, COLL)                                          \
	X(File_read_all_begin, COLL)                                    \
	X(File_read_all_end, NONBLOCKING)                               \
	X(File_read_at, NONBLOCKING)                                    \
	X(File_read_at_all, COLL)                                       \
	X(File_read_at_all_begin, COLL)                                 \
	X(File_read_at_all_end, NONBLOCKING)                            \
	X(File_read_ordered, COLL)                                      \
	X(File_read_ordered_begin, COLL)                                \
	X(File_read_ordered_end, NONBLOCKING)                           \
	X(File_read_shared, NONBLOCKING)                                \
	X(File_seek, NONBLOCKING)                                       \
	X(File_seek_shared, COLL)                                       \
	X(File_set_atomicity, COLL)                                     \
	X(File_set_errhandler, NONBLOCKING)                             \
	X(File_set_info, COLL)                                          \
	X(File_set_size, COLL)                                          \
	X(File_set_view, COLL)                                          \
	X(File_sync, COLL)                                              \
	X(File_write, NONBLOCKING)                                      \
	X(File_write_all, COLL)                                         \
	X(File_write_all_begin, COLL)                                   \
	X(File_write_all_end, NONBLOCKING)                              \
	X(File_write_at, NONBLOCKING)                                   \
	X(File_write_at_all, COLL)                                      \
	X(File_write_at_all_begin, COLL)                                \
	X(File_write_at_all_end, NONBLOCKING)                           \
	X(File_write_ordered, COLL)                                     \
	X(File_write_ordered_begin, COLL)                               \
	X(File_write_ordered_end, NONBLOCKING)                          \
	X(File_write_shared, NONBLOCKING)                               \
	X(Finalize, FINALIZE)                                           \
	X(Finalized, NONBLOCKING)                                       \
	X(Free_mem, NONBLOCKING)                                        \
	X(Gather, COLL)                                                 \
	X(Gatherv, COLL)                                                \
	X(Get, NONBLOCKING)                                             \
	X(Get_accumulate, NONBLOCKING)                                  \
	X(Get_address, NONBLOCKING)                                     \
	X(Get_count, NONBLOCKING)                                       \
	X(Get_elements, NONBLOCKING)                                    \
	X(Get_elements_x, NONBLOCKING)                                  \
	X(Get_library_version, NONBLOCKING)                             \
	X(Get_processor_name, NONBLOCKING)                              \
	X(Get_version, NONBLOCKING)                                     \
	X(Graph_create, CREATE)                                         \
	X(Graph_get, NONBLOCKING)                                       \
	X(Graph_map, NONBLOCKING)                                       \
	X(Graph_neighbors, NONBLOCKING)                                 \
	X(Graph_neighbors_count, NONBLOCKING)                           \
	X(Graphdims_get, NONBLOCKING)                                   \
	X(Grequest_complete, NONBLOCKING)                               \
	X(Grequest_start, NONBLOCKING)                                  \
	X(Group_c2f, NONBLOCKING)                                       \
	X(Group_compare, NONBLOCKING)                                   \
	X(Group_difference, NONBLOCKING)                                \
	X(Group_excl, NONBLOCKING)                                      \
	X(Group_f2c, NONBLOCKING)                                       \
	X(Group_free, NONBLOCKING)                                      \
	X(Group_incl, NONBLOCKING)                                      \
	X(Group_intersection, NONBLOCKING)                              \
	X(Group_range_excl, NONBLOCKING)                                \
	X(Group_range_incl, NONBLOCKING)                                \
	X(Group_rank, NONBLOCKING)                                      \
	X(Group_size, NONBLOCKING)                                      \
	X(Group_translate_ranks, NONBLOCKING)                           \
	X(Group_union, NONBLOCKING)                                     \
	X(Iallgather, NONBLOCKING)                                      \
	X(Iallgatherv, NONBLOCKING)                                     \
	X(Iallreduce, NONBLOCKING)                                      \
	X(Ialltoall, NONBLOCKING)                                       \
	X(Ialltoallv, NONBLOCKING)                                      \
	X(Ialltoallw, NONBLOCKING)                                      \
	X(Ibarrier, NONBLOCKING)                                        \
	X(Ibcast, NONBLOCKING)                                          \
	X(Ibsend, NONBLOCKING)                                          \
	X(Iexscan, NONBLOCKING)                                         \
	X(Igather, NONBLOCKING)                                         \
	X(Igatherv, NONBLOCKING)                                        \
	X(Improbe, POLL)                                                \
	X(Imrecv, NONBLOCKING)                                          \
	X(Ineighbor_allgather, NONBLOCKING)                             \
	X(Ineighbor_allgatherv, NONBLOCKING)                            \
	X(Ineighbor_alltoall, NONBLOCKING)                              \
	X(Ineighbor_alltoallv, NONBLOCKING)                             \
	X(Ineighbor_alltoallw, NONBLOCKING)                             \
	X(Info_c2f, NONBLOCKING)                                        \
	X(Info_create, NONBLOCKING)                                     \
	X(Info_delete, NONBLOCKING)                                     \
	X(Info_dup, NONBLOCKING)                                        \
	X(Info_f2c, NONBLOCKING)                                        \
	X(Info_free, NONBLOCKING)                                       \
	X(Info_get, NONBLOCKING)                                        \
	X(Info_get_nkeys, NONBLOCKING)                                  \
	X(Info_get_nthkey, NONBLOCKING)                                 \
	X(Info_get_valuelen, NONBLOCKING)                               \
	X(Info_set, NONBLOCKING)                                        \
	X(Init, NONBLOCKING)                                            \
	X(Init_thread, NONBLOCKING)                                     \
	X(Initialized, NONBLOCKING)                                     \
	X(Intercomm_create, CREATE)                                     \
	X(Intercomm_merge, CREATE)                                      \
	X(Iprobe, POLL)                                                 \
	X(Irecv, NONBLOCKING)                                           \
	X(Ireduce, NONBLOCKING)                                         \
	X(Ireduce_scatter, NONBLOCKING)                                 \
	X(Ireduce_scatter_block, NONBLOCKING)                           \
	X(Irsend, NONBLOCKING)                                          \
	X(Is_thread_main, NONBLOCKING)                                  \
	X(Iscan, NONBLOCKING)                                           \
	X(Iscatter, NONBLOCKING)                                        \
	X(Iscatterv, NONBLOCKING)                                       \
	X(Isend, NONBLOCKING)                                           \
	X(Issend, NONBLOCKING)                                          \
	X(Keyval_create, NONBLOCKING)                                   \
	X(Keyval_free, NONBLOCKING)                                     \
	X(Lookup_name, NONBLOCKING)                                     \
	X(Message_c2f, NONBLOCKING)                                     \
	X(Message_f2c, NONBLOCKING)                                     \
	X(Mprobe, PROBE)                                                \
	X(Mrecv, RECV)                                                  \
	X(Neighbor_allgather, NEIGHBOR)                                 \
	X(Neighbor_allgatherv, NEIGHBOR)                                \
	X(Neighbor_alltoall, NEIGHBOR)                                  \
	X(Neighbor_alltoallv, NEIGHBOR)                                 \
	X(Neighbor_alltoallw, NEIGHBOR)                                 \
	X(Op_c2f, NONBLOCKING)                                          \
	X(Op_commutative, NONBLOCKING)                                  \
	X(Op_create, NONBLOCKING)                                       \
	X(Op_f2c, NONBLOCKING)                                          \
	X(Op_free, NONBLOCKING)                                         \
	X(Open_port, NONBLOCKING)                                       \
	X(Pack, NONBLOCKING)                                            \
	X(Pack_external, NONBLOCKING)                                   \
	X(Pack_external_size, NONBLOCKING)                              \
	X(Pack_size, NONBLOCKING)                                       \
	X(Pcontrol, NONBLOCKING)                                        \
	X(Probe, PROBE)                                                 \
	X(Publish_name, NONBLOCKING)                                    \
	X(Put, NONBLOCKING)                                             \
	X(Query_thread, NONBLOCKING)                                    \
	X(Raccumulate, NONBLOCKING)                                     \
	X(Recv, RECV)                                                   \
	X(Recv_init, NONBLOCKING)                                       \
	X(Reduce, COLL)                                                 \
	X(Reduce_local, NONBLOCKING)                                    \
	X(Reduce_scatter, COLL)                                         \
	X(Reduce_scatter_block, COLL)                                   \
	X(Register_datarep, NONBLOCKING)                                \
	X(Request_c2f, NONBLOCKING)                                     \
	X(Request_f2c, NONBLOCKING)                                     \
	X(Request_free, NONBLOCKING)                                    \
	X(Request_get_status, POLL)                                     \
	X(Rget, NONBLOCKING)                                            \
	X(Rget_accumulate, NONBLOCKING)                                 \
	X(Rput, NONBLOCKING)                                            \
	X(Rsend, SEND)                                                  \
	X(Rsend_init, NONBLOCKING)                                      \
	X(Scan, COLL)                                                   \
	X(Scatter, COLL)                                                \
	X(Scatterv, COLL)                                               \
	X(Send, SEND)                                                   \
	X(Send_init, NONBLOCKING)                                       \
	X(Sendrecv, SENDRECV)                                           \
	X(Sendrecv_replace, SENDRECV)                                   \
	X(Ssend, SEND)                                                  \
	X(Ssend_init, NONBLOCKING)                                      \
	X(Start, NONBLOCKING)                                           \
	X(Startall, NONBLOCKING)                                        \
	X(Status_c2f, NONBLOCKING)                                      \
	X(Status_f2c, NONBLOCKING)                                      \
	X(Status_set_cancelled, NONBLOCKING)                            \
	X(Status_set_elements, NONBLOCKING)                             \
	X(Status_set_elements_x, NONBLOCKING)                           \
	X(T_category_changed, NONBLOCKING)                              \
	X(T_category_get_categories, NONBLOCKING)                       \
	X(T_category_get_cvars, NONBLOCKING)                            \
	X(T_category_get_index, NONBLOCKING)                            \
	X(T_category_get_info, NONBLOCKING)                             \
	X(T_category_get_num, NONBLOCKING)                              \
	X(T_category_get_pvars, NONBLOCKING)                            \
	X(T_cvar_get_index, NONBLOCKING)                                \
	X(T_cvar_get_info, NONBLOCKING)                                 \
	X(T_cvar_get_num, NONBLOCKING)                                  \
	X(T_cvar_handle_alloc, NONBLOCKING)                             \
	X(T_cvar_handle_free, NONBLOCKING)                              \
	X(T_cvar_read, NONBLOCKING)                                     \
	X(T_cvar_write, NONBLOCKING)                                    \
	X(T_enum_get_info, NONBLOCKING)                                 \
	X(T_enum_get_item, NONBLOCKING)                                 \
	X(T_finalize, NONBLOCKING)                                      \
	X(T_init_thread, NONBLOCKING)                                   \
	X(T_pvar_get_index, NONBLOCKING)                                \
	X(T_pvar_get_info, NONBLOCKING)                                 \
	X(T_pvar_get_num, NONBLOCKING)                                  \
	X(T_pvar_handle_alloc, NONBLOCKING)                             \
	X(T_pvar_handle_free, NONBLOCKING)                              \
	X(T_pvar_read, NONBLOCKING)                                     \
	X(T_pvar_readreset, NONBLOCKING)                                \
	X(T_pvar_reset, NONBLOCKING)                                    \
	X(T_pvar_session_create, NONBLOCKING)                           \
	X(T_pvar_session_free, NONBLOCKING)                             \
	X(T_pvar_start, NONBLOCKING)                                    \
	X(T_pvar_stop, NONBLOCKING)                                     \
	X(T_pvar_write, NONBLOCKING)                                    \
	X(Test, POLL)                                                   \
	X(Test_cancelled, NONBLOCKING)                                  \
	X(Testall, POLL)                                                \
	X(Testany, POLL)                                                \
	X(Testsome, POLL)                                               \
	X(Topo_test, NONBLOCKING)                                       \
	X(Type_c2f, NONBLOCKING)                                        \
	X(Type_commit, NONBLOCKING)                                     \
	X(Type_contiguous, NONBLOCKING)                                 \
	X(Type_create_darray, NONBLOCKING)                              \
	X(Type_create_f90_complex, NONBLOCKING)                         \
	X(Type_create_f90_integer, NONBLOCKING)                         \
	X(Type_create_f90_real, NONBLOCKING)                            \
	X(Type_create_hindexed, NONBLOCKING)                            \
	X(Type_create_hindexed_block, NONBLOCKING)                      \
	X(Type_create_hvector, NONBLOCKING)                             \
	X(Type_create_indexed_block, NONBLOCKING)                       \
	X(Type_create_keyval, NONBLOCKING)                              \
	X(Type_create_resized, NONBLOCKING)                             \
	X(Type_create_struct, NONBLOCKING)                              \
	X(Type_create_subarray, NONBLOCKING)                            \
	X(Type_delete_attr, NONBLOCKING)                                \
	X(Type_dup, NONBLOCKING)                                        \
	X(Type_extent, NONBLOCKING)                                     \
	X(Type_f2c, NONBLOCKING)                                        \
	X(Type_free, NONBLOCKING)                                       \
	X(Type_free_keyval, NONBLOCKING)                                \
	X(Type_get_attr, NONBLOCKING)                                   \
	X(Type_get_contents, NONBLOCKING)                               \
	X(Type_get_envelope, NONBLOCKING)                               \
	X(Type_get_extent, NONBLOCKING)                                 \
	X(Type_get_extent_x, NONBLOCKING)                               \
	X(Type_get_name, NONBLOCKING)                                   \
	X(Type_get_true_extent, NONBLOCKING)                            \
	X(Type_get_true_extent_x, NONBLOCKING)                          \
	X(Type_hindexed, NONBLOCKING)                                   \
	X(Type_hvector, NONBLOCKING)                                    \
	X(Type_indexed, NONBLOCKING)                                    \
	X(Type_lb, NONBLOCKING)                                         \
	X(Type_match_size, NONBLOCKING)                                 \
	X(Type_set_attr, NONBLOCKING)                                   \
	X(Type_set_name, NONBLOCKING)                                   \
	X(Type_size, NONBLOCKING)                                       \
	X(Type_size_x, NONBLOCKING)                                     \
	X(Type_struct, NONBLOCKING)                                     \
	X(Type_ub, NONBLOCKING)                                         \
	X(Type_vector, NONBLOCKING)                                     \
	X(Unpack, NONBLOCKING)                                          \
	X(Unpack_external, NONBLOCKING)                                 \
	X(Unpublish_name, NONBLOCKING)                                  \
	X(Wait, WAIT)                                                   \
	X(Waitall, WAITALL)                                             \
	X(Waitany, WAITANY)                                             \
	X(Waitsome, WAITANY)                                            \
	X(Win_allocate, CREATE)                                         \
	X(Win_allocate_shared, CREATE)                                  \
	X(Win_attach, NONBLOCKING)                                      \
	X(Win_c2f, NONBLOCKING)                                         \
	X(Win_call_errhandler, NONBLOCKING)                             \
	X(Win_complete, RMA_SYNC)                                       \
	X(Win_create, CREATE)                                           \
	X(Win_create_dynamic, CREATE)                                   \
	X(Win_create_errhandler, NONBLOCKING)                           \
	X(Win_create_keyval, NONBLOCKING)                               \
	X(Win_delete_attr, NONBLOCKING)                                 \
	X(Win_detach, NONBLOCKING)                                      \
	X(Win_f2c, NONBLOCKING)                                         \
	X(Win_fence, RMA_FENCE)                                         \
	X(Win_flush, RMA_SYNC)                                          \
	X(Win_flush_all, RMA_SYNC)                                      \
	X(Win_flush_local, RMA_SYNC)                                    \
	X(Win_flush_local_all, RMA_SYNC)                                \
	X(Win_free, CREATE)                                             \
	X(Win_free_keyval, NONBLOCKING)                                 \
	X(Win_get_attr, NONBLOCKING)                                    \
	X(Win_get_errhandler, NONBLOCKING)                              \
	X(Win_get_group, NONBLOCKING)                                   \
	X(Win_get_info, NONBLOCKING)                                    \
	X(Win_get_name, NONBLOCKING)                                    \
	X(Win_lock, RMA_SYNC)                                           \
	X(Win_lock_all, RMA_SYNC)                                       \
	X(Win_post, NONBLOCKING)                                        \
	X(Win_set_attr, NONBLOCKING)                                    \
	X(Win_set_errhandler, NONBLOCKING)                              \
	X(Win_set_info, NONBLOCKING)                                    \
	X(Win_set_name, NONBLOCKING)                                    \
	X(Win_shared_query, NONBLOCKING)                                \
	X(Win_start, RMA_SYNC)                                          \
	X(Win_sync, NONBLOCKING)                                        \
	X(Win_test, POLL)                                               \
	X(Win_unlock, RMA_SYNC)                                         \
	X(Win_unlock_all, RMA_SYNC)                                     \
	X(Win_wait, RMA_SYNC)                                           \
	X(Wtick, NONBLOCKING)                                           \
	X(Wtime, NONBLOCKING)

struct md_call {
	const char *name;	/* "MPI_Recv" */
	enum md_call_class cls;
};

/* The table, in strcmp order of name, and its length. */
extern const struct md_call md_calls[];
extern const int md_ncalls;

/* The class of the call by standard name ("MPI_Recv"): MD_CALL_NONE for
 * NULL, MD_CALL_NONBLOCKING for a name not in the table (MPIX_, a user
 * function that looks like MPI).  O(log n). */
enum md_call_class md_call_class(const char *name);
/* The name ("MPI_Waitany") is a function of mpi.h. */
bool md_call_known(const char *name);
/* What the class means, for a person (static text). */
const char *md_call_class_text(enum md_call_class cls);
/* Whether a rank in a call of this class waits on other ranks. */
bool md_call_blocks(enum md_call_class cls);
/* Collective over a communicator's members (COLL, CREATE, RMA_FENCE,
 * FINALIZE; NEIGHBOR over some of them). */
bool md_call_collective(enum md_call_class cls);
/* A call on request handles (MPI_Wait*, MPI_Test*: WAIT, WAITALL,
 * WAITANY, POLL): what it waits for was posted by an earlier call. */
bool md_call_on_requests(enum md_call_class cls);

#endif /* MD_MPICALL_H */
