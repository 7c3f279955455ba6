#include "sim/helios_trace.h"

#include <algorithm>
#include <array>
#include <filesystem>

#include "core/csv.h"
#include "sim/trace_csv.h"

namespace gleaner::sim {
namespace {

constexpr std::array<std::string_view, 8> kCounts = {
    "total_gpu_num",   "running_gpu_num", "pending_gpu_num",          "idle_gpu_num",
    "running_job_num", "pending_job_num", "pending_gpu_num_noless_8", "pending_gpu_num_less_8"};
constexpr const char* kExpected =
    "time,total_gpu_num,running_gpu_num,pending_gpu_num,idle_gpu_num,running_job_num,"
    "pending_job_num,pending_gpu_num_noless_8,pending_gpu_num_less_8 (any order, others allowed)";

// "" when the row's counts are consistent; otherwise which are not.
std::string CheckCounts(const HeliosMinute& m) {
  const auto exceeds = [](std::string_view part, int64_t p, std::string_view whole, int64_t w) {
    return std::string(part) + " (" + std::to_string(p) + ") exceeds " + std::string(whole) + " (" +
           std::to_string(w) + "); expected at most " + std::to_string(w);
  };
  if (m.running_gpus > m.total_gpus) {
    return exceeds("running_gpu_num", m.running_gpus, "total_gpu_num", m.total_gpus);
  }
  if (m.idle_gpus > m.total_gpus) {
    return exceeds("idle_gpu_num", m.idle_gpus, "total_gpu_num", m.total_gpus);
  }
  if (int64_t{m.running_gpus} + m.idle_gpus > m.total_gpus) {
    return exceeds("running_gpu_num + idle_gpu_num", int64_t{m.running_gpus} + m.idle_gpus,
                   "total_gpu_num", m.total_gpus);
  }
  if (m.pending_gpus_large > m.pending_gpus) {
    return exceeds("pending_gpu_num_noless_8", m.pending_gpus_large, "pending_gpu_num",
                   m.pending_gpus);
  }
  if (m.pending_gpus_small > m.pending_gpus) {
    return exceeds("pending_gpu_num_less_8", m.pending_gpus_small, "pending_gpu_num",
                   m.pending_gpus);
  }
  return "";
}

}  // namespace

core::Result<HeliosVc> ReadHeliosVc(const std::string& path, const HeliosReadOptions& options) {
  GLEANER_ASSIGN_OR_RETURN(core::CsvReader reader,
                           core::CsvReader::Open(path, core::CsvBlanks::kTrim));
  GLEANER_ASSIGN_OR_RETURN(
      const std::vector<size_t> at,
      reader.FindColumns({"time", kCounts[0], kCounts[1], kCounts[2], kCounts[3], kCounts[4],
                          kCounts[5], kCounts[6], kCounts[7]},
                         kExpected));
  HeliosVc vc;
  vc.name = std::filesystem::path(path).stem().string();
  DirtyRows dirty(options.skip_bad_rows, &vc.cleaning, &vc.skipped_messages);
  while (reader.Next()) {
    ++vc.cleaning.rows;
    const std::vector<std::string>& f = reader.fields();
    HeliosMinute m;
    std::array<int64_t, kCounts.size()> counts{};
    std::string problem = reader.RowProblem();
    if (problem.empty()) {
      problem = ParseDateTimeField("time", f[at[0]], &m.t_s);
      for (size_t c = 0; problem.empty() && c < kCounts.size(); ++c) {
        problem = ParseIntField(kCounts[c], f[at[c + 1]], 0, kMaxHeliosCount, &counts[c]);
      }
    }
    if (problem.empty()) {
      m.total_gpus = static_cast<int32_t>(counts[0]);
      m.running_gpus = static_cast<int32_t>(counts[1]);
      m.pending_gpus = static_cast<int32_t>(counts[2]);
      m.idle_gpus = static_cast<int32_t>(counts[3]);
      m.running_jobs = static_cast<int32_t>(counts[4]);
      m.pending_jobs = static_cast<int32_t>(counts[5]);
      m.pending_gpus_large = static_cast<int32_t>(counts[6]);
      m.pending_gpus_small = static_cast<int32_t>(counts[7]);
      problem = CheckCounts(m);
    }
    if (!problem.empty()) {
      GLEANER_RETURN_IF_ERROR(dirty.Add(path, reader.line(), problem));
      continue;
    }
    if (!vc.minutes.empty() && m.t_s <= vc.minutes.back().t_s) {
      ++vc.cleaning.duplicate_times;
      continue;
    }
    vc.minutes.push_back(m);
  }
  if (vc.minutes.empty()) {
    return core::InvalidArgument(path + ": no minute rows" +
                                 (vc.cleaning.bad_rows_skipped > 0
                                      ? " left after skipping " +
                                            std::to_string(vc.cleaning.bad_rows_skipped) +
                                            " dirty ones"
                                      : std::string()) +
                                 "; expected at least one row after the header");
  }
  return vc;
}

core::Result<std::vector<HeliosVc>> ReadHeliosDir(const std::string& dir,
                                                  const HeliosReadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::NotFound(dir +
                          " is not a directory; give the folder that holds the Helios vc*.csv "
                          "files (e.g. ../shared/traces/helios-earth)");
  }
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > 6 && name.rfind("vc", 0) == 0 &&
        name.ends_with(".csv")) {
      paths.push_back(entry.path().string());
    }
  }
  if (ec) return core::NotFound("cannot list " + dir + ": " + ec.message());
  if (paths.empty()) {
    return core::NotFound(dir +
                          " holds no vc*.csv file; expected the per-VC files of Helios "
                          "(HeliosArtifact data/Earth, e.g. vc3sl.csv)");
  }
  std::sort(paths.begin(), paths.end());
  std::vector<HeliosVc> vcs;
  for (const std::string& p : paths) {
    GLEANER_ASSIGN_OR_RETURN(HeliosVc vc, ReadHeliosVc(p, options));
    vcs.push_back(std::move(vc));
  }
  return vcs;
}

}  // namespace gleaner::sim
