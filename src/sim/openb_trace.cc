#include "sim/openb_trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>

namespace gleaner::sim {
namespace {

std::vector<std::string> SplitFields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string f =
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.push_back(std::move(f));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// One CSV file, read row by row with its columns found by name.
class CsvTable {
 public:
  // Reads the header; `columns` must all be present.
  static core::Result<CsvTable> Open(const std::string& path,
                                     const std::vector<std::string>& columns) {
    CsvTable t;
    t.path_ = path;
    t.in_.open(path);
    if (!t.in_) return core::NotFound("cannot open " + path + "; check the path");
    std::string header;
    if (!std::getline(t.in_, header)) {
      return core::InvalidArgument(path + ":1: the file is empty; expected a header naming " +
                                   Join(columns));
    }
    if (!header.empty() && header.back() == '\r') header.pop_back();
    t.header_ = SplitFields(header);
    for (const std::string& c : columns) {
      if (std::find(t.header_.begin(), t.header_.end(), c) == t.header_.end()) {
        return core::InvalidArgument(path + ":1: the header has no column \"" + c +
                                     "\"; expected columns " + Join(columns) + ", got \"" + header +
                                     "\"");
      }
    }
    return t;
  }

  // The next non-blank row; false at the end.
  bool Next() {
    std::string line;
    while (std::getline(in_, line)) {
      ++line_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      fields_ = SplitFields(line);
      return true;
    }
    return false;
  }

  core::Status CheckWidth() const {
    if (fields_.size() == header_.size()) return core::Status::Ok();
    return Error("expected " + std::to_string(header_.size()) +
                 " comma-separated fields as in the header, got " + std::to_string(fields_.size()));
  }

  bool Has(const std::string& column) const {
    return std::find(header_.begin(), header_.end(), column) != header_.end();
  }

  // A column the header has (Open checked the required ones).
  const std::string& Field(const std::string& column) const {
    const auto it = std::find(header_.begin(), header_.end(), column);
    return fields_[static_cast<size_t>(it - header_.begin())];
  }

  // An integer in [lo, hi].
  core::Result<int64_t> Int(const std::string& column, int64_t lo, int64_t hi) const {
    const std::string& text = Field(column);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
      return Error("column " + column + ": expected an integer from " + std::to_string(lo) +
                   " to " + std::to_string(hi) + ", got \"" + text + "\"");
    }
    return v;
  }

  core::Status Error(const std::string& what) const {
    return core::InvalidArgument(path_ + ":" + std::to_string(line_) + ": " + what);
  }

 private:
  static std::string Join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  }

  std::string path_;
  std::ifstream in_;
  std::vector<std::string> header_;
  std::vector<std::string> fields_;
  int64_t line_ = 1;
};

// Enough for any real node or pod (the largest openb node has 128 cores and
// 1 TiB) with room to spare, and far from int64 overflow in sums.
constexpr int64_t kMaxCpuMilli = 100'000'000;
constexpr int64_t kMaxMemoryMib = 1'000'000'000;

bool IsEmptyValue(const std::string& s) { return s.empty() || s == "nan" || s == "NaN"; }

}  // namespace

core::Result<std::vector<sched::FragNodeSpec>> ReadOpenbNodes(const std::string& path) {
  auto table = CsvTable::Open(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
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
  auto table = CsvTable::Open(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"});
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
    const std::string spec = table->Has("gpu_spec") ? table->Field("gpu_spec") : std::string();
    if (!IsEmptyValue(spec)) {
      size_t start = 0;
      while (start <= spec.size()) {
        const size_t bar = spec.find('|', start);
        std::string model =
            spec.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        if (!model.empty()) p.gpu_models.push_back(std::move(model));
        if (bar == std::string::npos) break;
        start = bar + 1;
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

}  // namespace gleaner::sim
