// What root reads in a terminal: tables of what others wrote (job commands,
// reasons, event details, a process's command line, what an agent
// reported). Before, an escape sequence in any of them reached root's
// terminal as it was, where it could retitle the window, hide lines or, on
// some terminals, answer back as typed input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/governance_commands.h"
#include "core/format.h"
#include "store/sqlite_store.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"
#include "views/gpus_table.h"
#include "views/host_view.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// An OSC title change, a CSI that clears the screen, a C1 CSI in UTF-8
// and a line break that would forge a row.
const std::string kHostile =
    "x\x1b]0;owned\x07\x1b[2J\xc2\x9b"
    "31m\nFAKE ROW";

bool Clean(const std::string& text) {
  return text.find('\x1b') == std::string::npos && text.find('\x07') == std::string::npos &&
         text.find("\xc2\x9b") == std::string::npos;
}

TEST(TerminalOutputTest, TheEventTableEscapesEveryCell) {
  const nlohmann::json events = {{{"at", "2026-12-06T10:00:00Z"},
                                  {"job", 7},
                                  {"kind", "cancelled"},
                                  {"user", kHostile},
                                  {"actor", kHostile},
                                  {"detail", kHostile},
                                  {"gpus", nlohmann::json::array()}}};
  const std::string table = cli::EventTable(events);
  EXPECT_TRUE(Clean(table)) << table;
  EXPECT_THAT(table, HasSubstr("x\\x1b]0;owned\\x07"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1) << "one header, one row";
}

TEST(TerminalOutputTest, GpusEscapesProcessesAndWhatAnAgentReported) {
  views::HostView view;
  view.hostname = kHostile;
  view.driver.source = kHostile;
  views::GpuView gpu;
  gpu.snapshot.name = gpu::Reading<std::string>::Of(kHostile);
  gpu.snapshot.health_detail = kHostile;
  views::ProcessView process;
  process.process.pid = 4242;
  process.owner = agent::ProcessInfo{};
  process.owner->user = kHostile;
  process.owner->command = "python " + kHostile;
  gpu.processes.push_back(process);
  gpu.verdict = observe::Verdict{};
  gpu.verdict->evidence.reason = kHostile;
  view.gpus.push_back(gpu);
  const std::string table = views::GpusToTable(view);
  EXPECT_TRUE(Clean(table)) << table;
  EXPECT_THAT(table, Not(HasSubstr("\nFAKE ROW"))) << "a process's line break forged a row";
}

TEST(TerminalOutputTest, TheQueueEscapesCommandsAndReasons) {
  testing::TempDir dir;
  {
    auto store = store::SqliteStore::Open((dir.path() / "gleaner.db").string());
    ASSERT_TRUE(store.ok()) << store.status().message();
    sched::JobSpec spec;
    spec.command = {"sh", "-c", kHostile};
    spec.working_dir = "/tmp";
    ASSERT_TRUE((*store)->Submit("alice", 4242, spec, core::FromUnixMicros(0)).ok());
  }
  const testing::Outcome queue = testing::Gleaner("queue --data-dir " + dir.path().string());
  ASSERT_EQ(queue.rc, 0) << queue.err;
  EXPECT_TRUE(Clean(queue.out)) << queue.out;
  EXPECT_THAT(queue.out, HasSubstr("sh -c x\\x1b]0;owned"));
}

}  // namespace
}  // namespace gleaner
