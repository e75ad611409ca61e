/*
 * ob1_types.c - the ob1 type provider: compiled with -g against the
 * installed Open MPI headers (whose opal_config.h and ompi_config.h are
 * those of the library that runs) and, for ob1's own headers, which
 * Debian's libopenmpi-dev does not install, the source tree of the same
 * Open MPI (Debian: 'apt-get source openmpi').  Its DWARF describes ob1's
 * matching state (collector/ob1q.c) for a stripped mca_pml_ob1.so.
 *
 * Built by dt_provider_build_ob1() (collector/dwtypes_provider.c) with
 *   cc -g -c ob1_types.c -I<cache>/inc -I<incdir>/openmpi -I<incdir>
 *      -I<srcdir>
 * where <cache>/inc/ompi/peruse/peruse.h is a copy of peruse.h here.
 */
#include "ompi_config.h"

#include "opal/class/opal_list.h"
#include "opal/class/opal_free_list.h"
#include "opal/class/opal_pointer_array.h"
#include "ompi/request/request.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/base/pml_base_request.h"
#include "ompi/mca/pml/base/pml_base_recvreq.h"
#include "ompi/mca/pml/base/pml_base_sendreq.h"
#include "ompi/mca/pml/ob1/pml_ob1_comm.h"
#include "ompi/mca/pml/ob1/pml_ob1_hdr.h"
#include "ompi/mca/pml/ob1/pml_ob1_recvfrag.h"
#include "ompi/mca/pml/ob1/pml_ob1_recvreq.h"
#include "ompi/mca/pml/ob1/pml_ob1_sendreq.h"

/* One object that mentions every type; never used at run time. */
struct md_ob1prov_all {
	opal_list_item_t list_item;
	opal_list_t list;
	opal_free_list_item_t free_list_item;
	opal_free_list_t free_list;
	opal_pointer_array_t pointer_array;
	ompi_request_t request;
	ompi_communicator_t communicator;
	ompi_datatype_t datatype;
	opal_datatype_t opal_datatype;
	mca_pml_base_request_t pml_request;
	mca_pml_base_recv_request_t pml_recv_request;
	mca_pml_base_send_request_t pml_send_request;
	mca_pml_ob1_comm_t ob1_comm;
	mca_pml_ob1_comm_proc_t ob1_comm_proc;
	mca_pml_ob1_common_hdr_t common_hdr;
	mca_pml_ob1_match_hdr_t match_hdr;
	mca_pml_ob1_rendezvous_hdr_t rendezvous_hdr;
	mca_pml_ob1_hdr_t hdr;
	mca_pml_ob1_recv_frag_t recv_frag;
	mca_pml_ob1_recv_request_t recv_request;
	mca_pml_ob1_send_request_t send_request;
};

struct md_ob1prov_all md_ob1prov_all;
