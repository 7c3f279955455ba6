// The trace readers of `gleaner sim` and `gleaner eval idle` (trace_csv.h
// and each trace's reader). The first byte picks the reader, the rest is the
// file: h Helios VC minutes, p Philly node sequence, m Philly machines,
// u utilization (a form feed splits off the memory file), n openb nodes,
// o openb pods, j openb pods as jobs, i ITP jobs; upper case skips bad rows.
// Any other byte picks by its value, so every input reaches some reader.

#include <cctype>
#include <sstream>

#include "fuzz/fuzz_support.h"
#include "sim/helios_trace.h"
#include "sim/itp_trace.h"
#include "sim/openb_jobs.h"
#include "sim/openb_trace.h"
#include "sim/philly_trace.h"
#include "sim/trace_csv.h"
#include "sim/utilization_trace.h"

namespace gleaner::fuzz {
namespace {

constexpr std::string_view kReaders = "hpmunoji";

void Read(std::string_view input) {
  if (input.empty()) return;
  const auto pick = static_cast<unsigned char>(input[0]);
  const std::string_view text = input.substr(1);
  const bool skip = std::isupper(pick) != 0;
  size_t reader = kReaders.find(static_cast<char>(std::tolower(pick)));
  if (reader == std::string_view::npos) reader = pick % kReaders.size();

  // Each reader opens its file afresh; one memory file per role serves
  // every input of the process.
  static MemoryFile file;
  static MemoryFile memory_file;
  switch (kReaders[reader]) {
    case 'h':
      (void)sim::ReadHeliosVc(file.Write(text), {.skip_bad_rows = skip});
      break;
    case 'p':
      (void)sim::ReadPhillyNodeSequence(file.Write(text), {.skip_bad_rows = skip});
      break;
    case 'm':
      (void)sim::ReadPhillyMachines(file.Write(text));
      break;
    case 'u': {
      const size_t split = text.find('\f');
      const std::string memory_path =
          split == std::string_view::npos ? "" : memory_file.Write(text.substr(split + 1));
      sim::TraceCleaning cleaning;
      (void)sim::ReadUtilizationTrace(file.Write(text.substr(0, split)), memory_path, skip,
                                      &cleaning);
      break;
    }
    case 'n':
      (void)sim::ReadOpenbNodes(file.Write(text));
      break;
    case 'o':
      (void)sim::ReadOpenbPods(file.Write(text));
      break;
    case 'j':
      (void)sim::ReadOpenbJobs(file.Write(text), {.skip_bad_rows = skip});
      break;
    case 'i': {
      std::istringstream in{std::string(text)};
      (void)sim::ParseItpJobs(in, "itp.csv", {.skip_bad_rows = skip, .keep_messages = 3});
      break;
    }
    default:
      break;
  }
}

}  // namespace
}  // namespace gleaner::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gleaner::fuzz::Read(gleaner::fuzz::AsText(data, size));
  return 0;
}
