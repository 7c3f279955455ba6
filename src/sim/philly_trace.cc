#include "sim/philly_trace.h"

#include <unordered_set>

#include "core/csv.h"
#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

constexpr int64_t kMaxGpusPerMachine = 1024;

// "" when `text` is "<integer>GB" or "<integer>MB" (blanks allowed before
// the unit), with *bytes set (binary units); otherwise what was expected.
std::string ParseMemory(std::string_view text, int64_t* bytes) {
  std::string problem =
      R"(column single GPU mem: expected an integer and a unit, like "12GB" or "512MB", got ")";
  problem += std::string(text) + "\"";
  if (text.size() < 3) return problem;
  const std::string_view unit = text.substr(text.size() - 2);
  int64_t shift = 0;
  if (unit == "GB") {
    shift = 30;
  } else if (unit == "MB") {
    shift = 20;
  } else {
    return problem;
  }
  std::string_view number = text.substr(0, text.size() - 2);
  while (!number.empty() && (number.back() == ' ' || number.back() == '\t')) {
    number.remove_suffix(1);
  }
  int64_t v = 0;
  if (!ParseIntField("single GPU mem", number, 1, int64_t{1} << 20, &v).empty()) return problem;
  *bytes = v << shift;
  return "";
}

}  // namespace

core::Result<PhillyNodeSequence> ReadPhillyNodeSequence(const std::string& path,
                                                        const PhillyReadOptions& options) {
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Open(path, core::CsvBlanks::kTrim));
  GLEANER_ASSIGN_OR_RETURN(
      const std::vector<size_t> at,
      reader.FindColumns({"time", "active", "total"}, "time,active,total (any order)"));
  PhillyNodeSequence seq;
  DirtyRows dirty(options.skip_bad_rows, &seq.cleaning, &seq.skipped_messages);
  while (reader.Next()) {
    ++seq.cleaning.rows;
    const std::vector<std::string>& f = reader.fields();
    PhillyMinute m;
    int64_t active = 0;
    int64_t total = 0;
    std::string problem;
    if (problem = reader.RowProblem(); !problem.empty()) {
    } else if (problem = ParseDateTimeField("time", f[at[0]], &m.t_s); !problem.empty()) {
    } else if (problem = ParseIntField("active", f[at[1]], 0, kMaxPhillyNodes, &active);
               !problem.empty()) {
    } else if (problem = ParseIntField("total", f[at[2]], 1, kMaxPhillyNodes, &total);
               !problem.empty()) {
    } else if (active > total) {
      problem = "active (" + std::to_string(active) + ") exceeds total (" + std::to_string(total) +
                "); expected at most " + std::to_string(total) + " active nodes";
    }
    if (!problem.empty()) {
      GLEANER_RETURN_IF_ERROR(dirty.Add(path, reader.line(), problem));
      continue;
    }
    if (!seq.minutes.empty() && m.t_s <= seq.minutes.back().t_s) {
      ++seq.cleaning.duplicate_times;
      continue;
    }
    m.active_nodes = static_cast<int32_t>(active);
    m.total_nodes = static_cast<int32_t>(total);
    m.gap = active == 0;
    seq.gap_rows += m.gap ? 1 : 0;
    seq.minutes.push_back(m);
  }
  if (seq.minutes.empty()) {
    return core::InvalidArgument(path + ": no minute rows" +
                                 (seq.cleaning.bad_rows_skipped > 0
                                      ? " left after skipping " +
                                            std::to_string(seq.cleaning.bad_rows_skipped) +
                                            " dirty ones"
                                      : std::string()) +
                                 "; expected at least one row time,active,total after the header");
  }
  return seq;
}

core::Result<std::vector<PhillyMachine>> ReadPhillyMachines(const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Open(path, core::CsvBlanks::kTrim));
  GLEANER_ASSIGN_OR_RETURN(const std::vector<size_t> at,
                           reader.FindColumns({"machineId", "number of GPUs", "single GPU mem"},
                                              "machineId, number of GPUs, single GPU mem"));
  std::vector<PhillyMachine> machines;
  std::unordered_set<std::string> seen;
  while (reader.Next()) {
    const std::vector<std::string>& f = reader.fields();
    PhillyMachine m;
    int64_t gpus = 0;
    std::string problem;
    if (problem = reader.RowProblem(); !problem.empty()) {
    } else if (f[at[0]].empty()) {
      problem = "column machineId: expected a machine id, got nothing";
    } else if (problem = ParseIntField("number of GPUs", f[at[1]], 1, kMaxGpusPerMachine, &gpus);
               !problem.empty()) {
    } else if (problem = ParseMemory(f[at[2]], &m.gpu_memory_bytes); !problem.empty()) {
    } else if (!seen.emplace(f[at[0]]).second) {
      problem = "column machineId: \"" + f[at[0]] +
                "\" appeared on an earlier line; expected each machine once";
    }
    if (!problem.empty()) {
      return core::InvalidArgument(reader.At(problem));
    }
    m.id = f[at[0]];
    m.gpus = static_cast<int>(gpus);
    machines.push_back(std::move(m));
  }
  if (machines.empty()) {
    return core::InvalidArgument(path +
                                 ": no machine rows; expected lines like \"m0,2, 12GB\" after "
                                 "the header");
  }
  return machines;
}

}  // namespace gleaner::sim
