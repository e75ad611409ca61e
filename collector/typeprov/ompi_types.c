/*
 * ompi_types.c - the type provider: compiled with -g against the installed
 * Open MPI development headers, its DWARF describes the 19 types Open MPI's
 * message-queue DLL asks for, for a libmpi that ships no DWARF (Debian's
 * libmpi.so.40 is stripped and its debug package is not always at hand).
 *
 * The includes are those of Open MPI's ompi/debuggers/ompi_debuggers.c,
 * which is how libmpi itself gets the same DWARF.  Each type is used in a
 * variable below so that the compiler emits its full definition.
 *
 * Compiled into mpi-deadlock (scripts/embed.sh); written out and built by
 * dt_provider_build() (collector/dwtypes_provider.c) with
 *   cc -g -c ompi_types.c -I<cache>/inc -I<incdir>/openmpi -I<incdir>
 * where <cache>/inc/ompi/peruse/peruse.h is peruse.h here.
 */
#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_hash_table.h"
#include "ompi/request/request.h"
#include "ompi/mca/pml/base/pml_base_request.h"
#include "ompi/mca/pml/base/pml_base_sendreq.h"
#include "ompi/mca/pml/base/pml_base_recvreq.h"
#include "opal/class/opal_pointer_array.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/topo/topo.h"
#include "ompi/group/group.h"
#include "ompi/proc/proc.h"
#include "opal/datatype/opal_datatype.h"
#include "ompi/datatype/ompi_datatype.h"
#include "mpi.h"

/* One object that mentions every type; never used at run time. */
struct md_typeprov_all {
	opal_list_item_t list_item;
	opal_list_t list;
	opal_free_list_item_t free_list_item;
	opal_free_list_t free_list;
	opal_hash_table_t hash_table;
	ompi_request_t request;
	mca_pml_base_request_t pml_request;
	mca_pml_base_send_request_t pml_send_request;
	mca_pml_base_recv_request_t pml_recv_request;
	opal_pointer_array_t pointer_array;
	ompi_communicator_t communicator;
	mca_topo_base_module_t topo_module;
	mca_topo_base_comm_cart_2_2_0_t topo_cart;
	mca_topo_base_comm_graph_2_2_0_t topo_graph;
	mca_topo_base_comm_dist_graph_2_2_0_t topo_dist_graph;
	ompi_group_t group;
	ompi_proc_t proc;
	opal_proc_t opal_proc;
	opal_process_name_t process_name;
	ompi_status_public_t status;
	ompi_datatype_t datatype;
	opal_datatype_t opal_datatype;
};

struct md_typeprov_all md_typeprov_all;
