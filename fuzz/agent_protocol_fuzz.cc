// What an agent and its coordinator say to each other (agent_protocol.h):
// the coordinator parses an agent's report, the agent the coordinator's
// reply. Both come from the network, so every input is tried as each. What
// one side writes, the other must read back to the same message.

#include <nlohmann/json.hpp>

#include "cluster/agent_protocol.h"
#include "fuzz/fuzz_support.h"

namespace gleaner::fuzz {
namespace {

using nlohmann::json;

// The wire form: a message is sent as the dump of its JSON.
template <typename Message, typename ToJson, typename FromJson>
void RoundTrip(const Message& message, ToJson to_json, FromJson from_json) {
  const std::string sent = to_json(message).dump();
  const json received = json::parse(sent, nullptr, false);
  Require(!received.is_discarded(), "a message's JSON parses");
  const core::Result<Message> back = from_json(received);
  Require(back.ok(), "a message written is a message read");
  Require(to_json(*back).dump() == sent, "a message read back writes the same JSON");
}

void Receive(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) return;
  if (const auto report = cluster::ReportFromJson(doc); report.ok()) {
    RoundTrip(*report, cluster::ReportToJson, cluster::ReportFromJson);
  }
  if (const auto reply = cluster::ReplyFromJson(doc); reply.ok()) {
    RoundTrip(*reply, cluster::ReplyToJson, cluster::ReplyFromJson);
  }
}

}  // namespace
}  // namespace gleaner::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gleaner::fuzz::Receive(gleaner::fuzz::AsText(data, size));
  return 0;
}
