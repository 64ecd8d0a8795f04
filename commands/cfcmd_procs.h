/*
 * cfcmd_procs.h - the CF.* commands' procedures, which commands/cfcmd.c
 * implements and commands/cfcmd_table.c lists with their documentation.
 * Private to commands/.
 */
#ifndef CFCMD_PROCS_H
#define CFCMD_PROCS_H

#include "cfcmd_host.h"

cfcmd_proc_t cfcmd_reserve;
cfcmd_proc_t cfcmd_add;
cfcmd_proc_t cfcmd_addnx;
cfcmd_proc_t cfcmd_insert;
cfcmd_proc_t cfcmd_insertnx;
cfcmd_proc_t cfcmd_exists;
cfcmd_proc_t cfcmd_mexists;
cfcmd_proc_t cfcmd_del;
cfcmd_proc_t cfcmd_count;
cfcmd_proc_t cfcmd_info;
cfcmd_proc_t cfcmd_scandump;
cfcmd_proc_t cfcmd_loadchunk;
cfcmd_proc_t cfcmd_compact;
cfcmd_proc_t cfcmd_debug;
cfcmd_proc_t cfcmd_prefetch_item;

#endif /* CFCMD_PROCS_H */
