#pragma once

#include <compare>
#include <functional>
#include <ostream>
#include <string>
#include <utility>

namespace gleaner::core {

// A string identifier that cannot be mixed up with another kind of id:
// StrongId<GpuUuidTag> and StrongId<NodeIdTag> do not convert to each other.
template <typename Tag>
class StrongId {
 public:
  StrongId() = default;
  explicit StrongId(std::string value) : value_(std::move(value)) {}

  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }

  auto operator<=>(const StrongId&) const = default;

  friend std::ostream& operator<<(std::ostream& os, const StrongId& id) { return os << id.value_; }

 private:
  std::string value_;
};

// The GPU's UUID as NVML reports it ("GPU-xxxxxxxx-..."). GPUs are keyed by
// UUID, never by index: indices change across reboots.
using GpuUuid = StrongId<struct GpuUuidTag>;
// A host taking part in gleaner (its hostname unless configured).
using NodeId = StrongId<struct NodeIdTag>;

}  // namespace gleaner::core

template <typename Tag>
struct std::hash<gleaner::core::StrongId<Tag>> {
  size_t operator()(const gleaner::core::StrongId<Tag>& id) const noexcept {
    return std::hash<std::string>{}(id.str());
  }
};
