#include "sched/action.h"

#include <algorithm>

namespace gleaner::sched {
namespace {

struct Printer {
  std::string operator()(const StartJob& a) const {
    std::string s = "start job " + std::to_string(a.job) + " on ";
    const size_t nodes = std::max<size_t>(a.gang.size(), 1);
    const size_t each = a.gpu_indices.size() / nodes;
    for (size_t n = 0; n < nodes; ++n) {
      s += (n ? " + " : "") + (a.gang.empty() ? a.node : a.gang[n]).str() + " gpus ";
      for (size_t i = n * each; i < (n + 1) * each; ++i) {
        s += (i > n * each ? "," : "") + std::to_string(a.gpu_indices[i]);
      }
    }
    if (a.gpu_milli < 1000) s += " milli " + std::to_string(a.gpu_milli);
    return s;
  }
  std::string operator()(const PreemptJob& a) const {
    return "preempt job " + std::to_string(a.job) + ": " + a.reason;
  }
  std::string operator()(const ResizeJob& a) const {
    std::string s = "resize job " + std::to_string(a.job) + " to " + a.node.str() + " gpus ";
    for (size_t i = 0; i < a.gpu_indices.size(); ++i) {
      s += (i ? "," : "") + std::to_string(a.gpu_indices[i]);
    }
    return s + ": " + a.reason;
  }
  std::string operator()(const RequeueJob& a) const {
    return "requeue job " + std::to_string(a.job) + ": " + a.reason;
  }
  std::string operator()(const RejectJob& a) const {
    return "reject job " + std::to_string(a.job) + ": " + a.reason;
  }
};

}  // namespace

std::string ToString(const Action& action) { return std::visit(Printer{}, action); }

}  // namespace gleaner::sched
