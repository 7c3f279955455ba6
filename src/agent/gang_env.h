#pragma once

#include <map>
#include <string>

#include "cluster/agent_protocol.h"

namespace gleaner::agent {

// What a gang member's process is told to meet its peers: one process per
// node, so RANK and WORLD_SIZE count nodes (NODE_RANK and NNODES say the
// same for torchrun, with GPUS_PER_NODE for --nproc-per-node), LOCAL_RANK
// is 0, MASTER_ADDR and MASTER_PORT are rank 0's host and the gang's port,
// GLEANER_GANG_HOSTS lists the hosts in rank order and GLEANER_HOSTFILE
// names `hostfile` (docs/gangs.md).
std::map<std::string, std::string> GangEnvironment(const cluster::GangRole& gang,
                                                   const std::string& hostfile);

// The hostfile's text, a line per host in rank order, in the form MPI and
// DeepSpeed launchers read: "host-a slots=8".
std::string HostfileText(const cluster::GangRole& gang);

}  // namespace gleaner::agent
