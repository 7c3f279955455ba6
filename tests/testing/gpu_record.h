#pragma once

#include "store/observation_store.h"

namespace gleaner::testing {

// One of the demo's H100s as the store records it, seen first and last at `seen`.
inline store::GpuRecord H100Record(const char* uuid, uint32_t index, core::TimePoint seen) {
  store::GpuRecord g;
  g.uuid = core::GpuUuid(uuid);
  g.host = "node1";
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.memory_total = core::Bytes::GiB(80);
  g.first_seen = g.last_seen = seen;
  return g;
}

}  // namespace gleaner::testing
