#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/utilization_trace.h"

namespace gleaner::sim {

// Readers for Microsoft's Philly cluster (Jeon et al., ATC'19): the
// per-minute node series `philly_node_sequence.csv` (from HeliosArtifact)
// and the machine list `cluster_machine_list` (msr-fiddle/philly-traces).

// Node series: a header naming `time`, `active` and `total` (any order,
// other columns read past), then one row per minute.
//
// A row is dirty, and an error naming FILE:LINE and what was expected, when:
// its field count differs from the header's; its time is not a valid
// `YYYY-MM-DD HH:MM:SS`; active is not an integer from 0 to kMaxPhillyNodes;
// total is not one from 1 to kMaxPhillyNodes; or active exceeds total.
// With skip_bad_rows such rows are skipped and counted instead.
//
// Accepted: gaps between minutes (the shared file has none from
// 2017-10-25 14:01 to 23:59); a total that changes (420 nodes, 552 on
// 2017-11-01/02, 174 for the hour after 01:00 on 2017-11-05, the night
// the clocks went back). A row whose time is at or before the previous
// kept row's (a repeated hour when clocks go back) is a duplicate: counted
// in cleaning.duplicate_times, the first kept. A row with active = 0 is the
// series' way of writing a telemetry gap (the shared file has 1,081 in a
// row on 2017-10-26): it is kept, marked `gap` and counted in gap_rows;
// consumers decide whether to drop it. Blank lines are skipped silently.
inline constexpr int64_t kMaxPhillyNodes = 1'000'000;

struct PhillyMinute {
  int64_t t_s = 0;           // seconds since 1970 of the written time (as UTC)
  int32_t active_nodes = 0;  // nodes with running jobs
  int32_t total_nodes = 0;
  bool gap = false;  // telemetry gap: the row said active = 0
};

struct PhillyNodeSequence {
  std::vector<PhillyMinute> minutes;          // strictly increasing t_s
  TraceCleaning cleaning;                     // rows, duplicate_times, bad_rows_skipped
  int64_t gap_rows = 0;                       // kept rows with gap set
  std::vector<std::string> skipped_messages;  // the first 10 "FILE:LINE: why"
};

struct PhillyMachine {
  std::string id;
  int gpus = 0;
  int64_t gpu_memory_bytes = 0;  // of one GPU
};

struct PhillyReadOptions {
  bool skip_bad_rows = false;
};

// NotFound when the file cannot be opened; InvalidArgument for an empty
// file, a header missing a column, the first dirty row (unless skipping)
// or a file left with no clean row.
core::Result<PhillyNodeSequence> ReadPhillyNodeSequence(const std::string& path,
                                                        const PhillyReadOptions& options);

// cluster_machine_list: a header line, then `machineId, number of GPUs,
// single GPU mem` per machine (e.g. "m0,2, 12GB"), blanks around fields
// allowed. The memory is an integer with a unit GB or MB (binary: GiB,
// MiB). Every malformed row, a machine listed twice or GPUs outside 1-1024
// is an InvalidArgument naming FILE:LINE; the list is small and has no
// dirt, so there is no skipping. Machines come back in file order.
core::Result<std::vector<PhillyMachine>> ReadPhillyMachines(const std::string& path);

}  // namespace gleaner::sim
