// Files gleaner keeps in its data directory, read back at every start: one
// written to crash the daemon (JSON nested 100,000 deep overflowed the
// stack while it was read) is moved aside, and the daemon starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agent/holder_parker.h"
#include "core/clock.h"
#include "gpu/fault_memory.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using ::testing::HasSubstr;

std::string NestedDeeply() { return std::string(100000, '[') + std::string(100000, ']'); }

TEST(StateFileTest, ADeeplyNestedFaultFileIsRefusedNotParsed) {
  testing::TempDir dir;
  const std::string path = dir.Write("gpu-faults.json", "{\"faults\": " + NestedDeeply() + "}");
  const auto file = gpu::ReadFaultFile(path);
  ASSERT_FALSE(file.ok());
  // The code that moves an unreadable file aside (FaultMemory::Load).
  EXPECT_EQ(file.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr("is not a GPU fault file"));
}

TEST(StateFileTest, ADeeplyNestedParkedHoldersFileIsMovedAside) {
  testing::TempDir dir;
  const std::string path = dir.Write("parked-holders.json", "{\"parked\": " + NestedDeeply() + "}");
  core::ManualClock clock(core::FromUnixMicros(1'800'000'000'000'000));
  agent::HolderParker parker(nullptr, clock, {{}, path});
  std::vector<std::string> logged;
  parker.Recover([&](const std::string& line) { logged.push_back(line); });
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_THAT(logged[0], HasSubstr("is malformed (nested too deeply)"));
  EXPECT_TRUE(std::filesystem::exists(path + ".malformed"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(parker.Parkings().empty());
}

}  // namespace
}  // namespace gleaner
