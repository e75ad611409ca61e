/*
 * fakedll.h - the entry points every fake message-queue DLL of the tests
 * exports (the MQD interface, include/mqd.h): declared once for
 * fakedll.c (Open MPI's) and fakempich.c (MPICH's).  mqs_get_comm_group
 * is Open MPI's only.
 */
#ifndef MD_FAKEDLL_H
#define MD_FAKEDLL_H

#include "mqd.h"

void mqs_setup_basic_callbacks(const struct mqd_basic_callbacks *cb);
char *mqs_version_string(void);
int mqs_version_compatibility(void);
int mqs_dll_taddr_width(void);
char *mqs_dll_error_string(int code);
int mqs_setup_image(mqd_image *image, const struct mqd_image_callbacks *cb);
int mqs_image_has_queues(mqd_image *image, char **msg);
void mqs_destroy_image_info(mqd_image_info *info);
int mqs_setup_process(mqd_process *p, const struct mqd_process_callbacks *cb);
void mqs_destroy_process_info(mqd_process_info *info);
int mqs_process_has_queues(mqd_process *p, char **msg);
int mqs_update_communicator_list(mqd_process *p);
int mqs_setup_communicator_iterator(mqd_process *p);
int mqs_get_communicator(mqd_process *p, struct mqd_communicator *c);
int mqs_get_comm_group(mqd_process *p, int *group);
int mqs_next_communicator(mqd_process *p);
int mqs_setup_operation_iterator(mqd_process *p, int cls);
int mqs_next_operation(mqd_process *p, struct mqd_pending_operation *op);

#endif /* MD_FAKEDLL_H */
