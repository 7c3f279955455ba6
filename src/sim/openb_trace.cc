#include "sim/openb_trace.h"

#include <initializer_list>

#include "core/csv.h"
#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

// One openb CSV file, its fields read by column name.
class CsvTable {
 public:
  // Reads the header; `columns` must all be present.
  static core::Result<CsvTable> Open(const std::string& path,
                                     std::initializer_list<std::string_view> columns,
                                     std::string_view expected) {
    GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                             core::CsvReader::Open(path, core::CsvBlanks::kKeep));
    GLEANER_RETURN_IF_ERROR(reader.FindColumns(columns, expected).status());
    return CsvTable(std::move(reader));
  }

  // The next non-blank row; false at the end.
  bool Next() { return reader_.Next(); }

  core::Status CheckWidth() const {
    const std::string problem = reader_.RowProblem();
    return problem.empty() ? core::Status::Ok() : Error(problem);
  }

  bool Has(std::string_view column) const { return reader_.Find(column).has_value(); }

  // A column the header has (Open checked the required ones).
  const std::string& Field(std::string_view column) const {
    return reader_.fields()[*reader_.Find(column)];
  }

  // An integer in [lo, hi].
  core::Result<int64_t> Int(std::string_view column, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    const std::string problem = ParseIntField(column, Field(column), lo, hi, &v);
    if (!problem.empty()) return Error(problem);
    return v;
  }

  core::Status Error(const std::string& what) const {
    return core::InvalidArgument(reader_.At(what));
  }

 private:
  explicit CsvTable(core::CsvReader reader) : reader_(std::move(reader)) {}

  core::CsvReader reader_;
};

// Enough for any real node or pod (the largest openb node has 128 cores and
// 1 TiB) with room to spare, and far from int64 overflow in sums.
constexpr int64_t kMaxCpuMilli = 100'000'000;
constexpr int64_t kMaxMemoryMib = 1'000'000'000;

bool IsEmptyValue(const std::string& s) { return s.empty() || s == "nan" || s == "NaN"; }

}  // namespace

core::Result<std::vector<sched::FragNodeSpec>> ReadOpenbNodes(const std::string& path) {
  auto table = CsvTable::Open(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"},
                              "columns sn, cpu_milli, memory_mib, gpu, model");
  if (!table.ok()) return table.status();
  std::vector<sched::FragNodeSpec> nodes;
  while (table->Next()) {
    GLEANER_RETURN_IF_ERROR(table->CheckWidth());
    sched::FragNodeSpec n;
    n.name = table->Field("sn");
    if (n.name.empty()) return table->Error("column sn: expected a node name, got nothing");
    auto cpu = table->Int("cpu_milli", 0, kMaxCpuMilli);
    if (!cpu.ok()) return cpu.status();
    auto mem = table->Int("memory_mib", 0, kMaxMemoryMib);
    if (!mem.ok()) return mem.status();
    auto gpus = table->Int("gpu", 0, sched::kFragMaxGpusPerNode);
    if (!gpus.ok()) return gpus.status();
    n.cpu_milli = *cpu;
    n.memory_mib = *mem;
    n.gpus = static_cast<int>(*gpus);
    n.model = table->Field("model");
    if (IsEmptyValue(n.model)) n.model.clear();
    if (n.gpus > 0 && n.model.empty()) {
      return table->Error("column model: node " + n.name + " has " + std::to_string(n.gpus) +
                          " GPUs but no model; expected a model name such as V100M32");
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

core::Result<std::vector<sched::FragPodSpec>> ReadOpenbPods(const std::string& path) {
  auto table = CsvTable::Open(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
                              "columns name, cpu_milli, memory_mib, num_gpu, gpu_milli");
  if (!table.ok()) return table.status();
  std::vector<sched::FragPodSpec> pods;
  while (table->Next()) {
    GLEANER_RETURN_IF_ERROR(table->CheckWidth());
    sched::FragPodSpec p;
    p.name = table->Field("name");
    auto cpu = table->Int("cpu_milli", 0, kMaxCpuMilli);
    if (!cpu.ok()) return cpu.status();
    auto mem = table->Int("memory_mib", 0, kMaxMemoryMib);
    if (!mem.ok()) return mem.status();
    auto num_gpu = table->Int("num_gpu", 0, sched::kFragMaxGpusPerNode);
    if (!num_gpu.ok()) return num_gpu.status();
    auto gpu_milli = table->Int("gpu_milli", 0, 1000);
    if (!gpu_milli.ok()) return gpu_milli.status();
    p.cpu_milli = *cpu;
    p.memory_mib = *mem;
    p.num_gpu = static_cast<int>(*num_gpu);
    p.gpu_milli = p.num_gpu == 0 ? 0 : static_cast<int>(*gpu_milli);
    if (p.num_gpu > 0 && p.gpu_milli == 0) {
      return table->Error("column gpu_milli: pod " + p.name + " asks for " +
                          std::to_string(p.num_gpu) +
                          " GPUs with a share of 0; expected 1 to 1000 milli per GPU");
    }
    if (p.num_gpu > 1 && p.gpu_milli < 1000) {
      return table->Error("column gpu_milli: pod " + p.name + " asks for " +
                          std::to_string(p.num_gpu) + " GPUs of " + std::to_string(p.gpu_milli) +
                          " milli; shares below 1000 are only for one GPU");
    }
    // gpu_spec is optional: files without it have no model constraints.
    if (table->Has("gpu_spec")) p.gpu_models = SplitOpenbGpuSpec(table->Field("gpu_spec"));
    pods.push_back(std::move(p));
  }
  return pods;
}

std::vector<std::string> SplitOpenbGpuSpec(std::string_view spec) {
  std::vector<std::string> models;
  if (spec == "nan" || spec == "NaN") return models;
  while (!spec.empty()) {
    const size_t bar = spec.find('|');
    if (std::string_view m = spec.substr(0, bar); !m.empty()) models.emplace_back(m);
    if (bar == std::string_view::npos) break;
    spec.remove_prefix(bar + 1);
  }
  return models;
}

}  // namespace gleaner::sim
