/*
 * sysmem.h - how much memory this process may use: the machine's physical
 * memory, or the memory limit of the control groups it runs in (a container,
 * a systemd unit) when that is lower. The bound on the keyspace when
 * maxmemory is 0.
 *
 * Contract: leaf module (libc only); reads files, keeps no state.
 */
#ifndef SYSMEM_H
#define SYSMEM_H

#include <stdint.h>

/* The lowest memory limit on the way from this process's control groups up
 * to their root, read from proc_cgroup (the format of /proc/self/cgroup)
 * and the cgroup file system mounted at root (/sys/fs/cgroup):
 *  - cgroup v2, the line "0::<path>": memory.max in root/<path> and each of
 *    its parents up to root ("max" is no limit);
 *  - cgroup v1, a line naming the memory controller ("4:memory:<path>"):
 *    memory.limit_in_bytes in root/memory/<path> and each of its parents
 *    (values of 2^62 and above mean no limit). Walking up finds the limit
 *    also when the container's own group is mounted as root, as Docker
 *    does without a cgroup namespace.
 * Missing or unreadable files set no limit. UINT64_MAX when there is none. */
uint64_t sysmem_cgroup_limit(const char *proc_cgroup, const char *root);

/* The lower of the machine's physical memory and this process's cgroup limit
 * (/proc/self/cgroup, /sys/fs/cgroup); UINT64_MAX when neither is known. */
uint64_t sysmem_limit(void);

#endif /* SYSMEM_H */
