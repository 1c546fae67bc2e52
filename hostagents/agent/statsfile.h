/* SPDX-License-Identifier: Apache-2.0
 *
 * Where pdcp-agent's stats lines go (--stats PATH): opened without ever blocking the agent.
 * DPDK-free, so that the unit tests can open fifos with it.
 */
#ifndef AGENT_STATSFILE_H
#define AGENT_STATSFILE_H

#include <stddef.h>
#include <stdio.h>

/* PATH opened for writing (created, truncated). A fifo nobody reads is refused at once (NULL,
 * one line in err) instead of hanging in open(2) until a reader comes; once open, writes
 * block as usual, so a stats line is never torn. */
FILE *stats_file_open(const char *path, char *err, size_t errlen);

#endif /* AGENT_STATSFILE_H */
