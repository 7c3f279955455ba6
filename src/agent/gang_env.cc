#include "agent/gang_env.h"

namespace gleaner::agent {

std::map<std::string, std::string> GangEnvironment(const cluster::GangRole& gang,
                                                   const std::string& hostfile) {
  std::string hosts;
  for (const std::string& h : gang.hosts) hosts += (hosts.empty() ? "" : ",") + h;
  const std::string rank = std::to_string(gang.rank);
  const std::string size = std::to_string(gang.hosts.size());
  return {
      {"MASTER_ADDR", gang.hosts.at(0)},
      {"MASTER_PORT", std::to_string(gang.port)},
      {"WORLD_SIZE", size},
      {"RANK", rank},
      {"LOCAL_RANK", "0"},
      {"NODE_RANK", rank},
      {"NNODES", size},
      {"GPUS_PER_NODE", std::to_string(gang.gpus_per_node)},
      {"GLEANER_GANG_HOSTS", hosts},
      {"GLEANER_HOSTFILE", hostfile},
  };
}

std::string HostfileText(const cluster::GangRole& gang) {
  std::string text;
  for (const std::string& h : gang.hosts) {
    text += h + " slots=" + std::to_string(gang.gpus_per_node) + "\n";
  }
  return text;
}

}  // namespace gleaner::agent
