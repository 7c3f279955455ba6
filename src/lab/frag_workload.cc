#include "lab/frag_workload.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "sched/seeded_random.h"

namespace gleaner::lab {
namespace {

using Pods = std::vector<const sched::FragPodSpec*>;

bool Sharing(const sched::FragPodSpec& p) { return p.num_gpu == 1 && p.gpu_milli < 1000; }
bool MultiGpu(const sched::FragPodSpec& p) { return p.num_gpu >= 2; }

core::Status NoneToDraw(const FragVariant& v, std::string_view kind) {
  return core::InvalidArgument("workload " + v.name + " needs " + std::string(kind) +
                               " to draw from, and the base pod list has none");
}

// Pods of `from` drawn with replacement until their GPU requests would pass
// `budget_milli` (the first that would ends the draw, as the authors' tune
// does).
void DrawGpuBudget(const Pods& from, int64_t budget_milli, sched::SeededRandom& rng,
                   std::vector<sched::FragPodSpec>* out) {
  int64_t drawn = 0;
  while (!from.empty()) {
    const sched::FragPodSpec& p = *from[rng.Below(from.size())];
    if (drawn + p.total_gpu_milli() > budget_milli) return;
    drawn += p.total_gpu_milli();
    out->push_back(p);
  }
}

void DrawCount(const Pods& from, int64_t count, sched::SeededRandom& rng,
               std::vector<sched::FragPodSpec>* out) {
  for (int64_t i = 0; i < count && !from.empty(); ++i)
    out->push_back(*from[rng.Below(from.size())]);
}

// The same GPU demand as the base, `share` of it from the pods `in_a` picks,
// the rest from the other GPU pods; pods without GPUs kept as they are.
core::Result<std::vector<sched::FragPodSpec>> SplitGpuDemand(
    const std::vector<sched::FragPodSpec>& base, const FragVariant& v,
    bool (*in_a)(const sched::FragPodSpec&), std::string_view a_kind, uint64_t seed) {
  Pods a;
  Pods b;
  std::vector<sched::FragPodSpec> out;
  int64_t total = 0;
  for (const sched::FragPodSpec& p : base) {
    if (p.total_gpu_milli() == 0) {  // no GPU asked: kept, never drawn by budget
      out.push_back(p);
      continue;
    }
    total += p.total_gpu_milli();
    (in_a(p) ? a : b).push_back(&p);
  }
  if (a.empty()) return NoneToDraw(v, a_kind);
  if (b.empty() && v.share < 1) return NoneToDraw(v, "other GPU pods");
  sched::SeededRandom rng(seed);
  const auto a_budget = static_cast<int64_t>(std::llround(v.share * static_cast<double>(total)));
  DrawGpuBudget(a, a_budget, rng, &out);
  DrawGpuBudget(b, total - a_budget, rng, &out);
  return out;
}

// `count` pods in all, `share` of them without GPUs.
core::Result<std::vector<sched::FragPodSpec>> SplitPodCount(
    const std::vector<sched::FragPodSpec>& base, const FragVariant& v, uint64_t seed) {
  Pods cpu_only;
  Pods gpu;
  for (const sched::FragPodSpec& p : base) (p.num_gpu == 0 ? cpu_only : gpu).push_back(&p);
  const auto count = static_cast<int64_t>(base.size());
  const auto cpu_count = static_cast<int64_t>(std::llround(v.share * static_cast<double>(count)));
  if (cpu_only.empty() && cpu_count > 0) return NoneToDraw(v, "pods without GPUs");
  if (gpu.empty() && cpu_count < count) return NoneToDraw(v, "GPU pods");
  sched::SeededRandom rng(seed);
  std::vector<sched::FragPodSpec> out;
  DrawCount(cpu_only, cpu_count, rng, &out);
  DrawCount(gpu, count - cpu_count, rng, &out);
  return out;
}

// The base with GPU pods, in a seeded order, pinned to one model family
// until the pinned pods ask for `share` of the GPU requests. A pod is
// pinned only to a family with a node that could hold it when empty (a
// constraint a user could meet), each such family alike. (Drawn in
// proportion to the families' GPUs instead, nearly every pin lands on the
// largest family and binds nothing: FGD and BestFit then allocate 93-94 %
// at 100 % load where the authors' gpuspec33 curves show 88 and 80.)
core::Result<std::vector<sched::FragPodSpec>> PinToModels(
    const std::vector<sched::FragPodSpec>& base, const std::vector<sched::FragNodeSpec>& nodes,
    const FragVariant& v, uint64_t seed) {
  std::map<std::string, std::vector<std::string>> family_models;
  std::vector<std::string> node_family;  // by node, computed once
  for (const sched::FragNodeSpec& n : nodes) {
    node_family.push_back(GpuFamily(n.model));
    if (n.gpus == 0) continue;
    std::vector<std::string>& models = family_models[node_family.back()];
    if (std::find(models.begin(), models.end(), n.model) == models.end()) models.push_back(n.model);
  }
  std::vector<sched::FragPodSpec> out = base;
  std::vector<size_t> gpu_pods;
  int64_t total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].num_gpu == 0) continue;
    gpu_pods.push_back(i);
    total += out[i].total_gpu_milli();
  }
  if (gpu_pods.empty()) return NoneToDraw(v, "GPU pods");
  sched::SeededRandom rng(seed);
  rng.Shuffle(gpu_pods);
  const auto target = static_cast<int64_t>(std::llround(v.share * static_cast<double>(total)));
  int64_t pinned = 0;
  for (size_t i : gpu_pods) {
    sched::FragPodSpec& p = out[i];
    if (pinned + p.total_gpu_milli() > target) continue;
    std::vector<const std::string*> hosts;  // families with a node that could hold p
    for (size_t n = 0; n < nodes.size(); ++n) {
      const sched::FragNodeSpec& node = nodes[n];
      if (node.gpus < p.num_gpu || node.cpu_milli < p.cpu_milli || node.memory_mib < p.memory_mib) {
        continue;
      }
      const std::string* family = &node_family[n];
      if (std::none_of(hosts.begin(), hosts.end(),
                       [&](const std::string* h) { return *h == *family; })) {
        hosts.push_back(family);
      }
    }
    if (hosts.empty()) continue;
    p.gpu_models = family_models[*hosts[rng.Below(hosts.size())]];
    pinned += p.total_gpu_milli();
    if (pinned == target) break;
  }
  return out;
}

}  // namespace

std::string GpuFamily(std::string_view model) {
  size_t end = model.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(model[end - 1]))) --end;
  if (end < model.size() && end > 1 && model[end - 1] == 'M')
    return std::string(model.substr(0, end - 1));
  return std::string(model);
}

core::Result<FragVariant> ParseFragVariant(std::string_view name) {
  FragVariant v;
  v.name = std::string(name);
  if (name == "default") return v;
  struct Form {
    std::string_view prefix;
    FragVariant::Kind kind;
    double unit;
  };
  static constexpr Form kForms[] = {{"cpu", FragVariant::Kind::kNonGpu, 1000},
                                    {"gpushare", FragVariant::Kind::kGpuShare, 100},
                                    {"multigpu", FragVariant::Kind::kMultiGpu, 100},
                                    {"gpuspec", FragVariant::Kind::kGpuSpec, 100}};
  for (const Form& f : kForms) {
    if (name.substr(0, f.prefix.size()) != f.prefix) continue;
    const std::string_view digits = name.substr(f.prefix.size());
    if (digits.empty() || digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      break;
    }
    v.kind = f.kind;
    v.share = std::stod(std::string(digits)) / f.unit;
    if (v.share <= 0 || v.share > 1) {
      return core::InvalidArgument("workload " + v.name + " asks for a share of " +
                                   std::to_string(v.share * 100) +
                                   " %; it must be above 0 and at most 100");
    }
    return v;
  }
  return core::InvalidArgument("unknown workload \"" + v.name +
                               "\"; use one of: " + std::string(kFragVariantForms));
}

core::Result<std::vector<sched::FragPodSpec>> MakeFragWorkload(
    const std::vector<sched::FragPodSpec>& base, const std::vector<sched::FragNodeSpec>& nodes,
    const FragVariant& variant, uint64_t seed) {
  switch (variant.kind) {
    case FragVariant::Kind::kDefault:
      return base;
    case FragVariant::Kind::kNonGpu:
      return SplitPodCount(base, variant, seed);
    case FragVariant::Kind::kGpuShare:
      return SplitGpuDemand(base, variant, Sharing, "GPU-sharing pods", seed);
    case FragVariant::Kind::kMultiGpu:
      return SplitGpuDemand(base, variant, MultiGpu, "multi-GPU pods", seed);
    case FragVariant::Kind::kGpuSpec:
      return PinToModels(base, nodes, variant, seed);
  }
  return base;
}

}  // namespace gleaner::lab
