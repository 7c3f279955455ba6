// RunProgram with real programs: what they print and how they end, the
// environment they get, and the deadline, also for one that closes its
// output and runs on.
#include "agent/run_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

namespace gleaner::agent {
namespace {

using ::testing::HasSubstr;

TEST(RunProgramTest, CollectsOutputAndTheExitCode) {
  auto run = RunProgram({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->out, "out\n");
  EXPECT_EQ(run->err, "err\n");
  EXPECT_EQ(run->exit_code, 3);
}

TEST(RunProgramTest, OverridesOrReplacesTheEnvironment) {
  ProgramOptions options;
  options.env = {"HOME=/elsewhere"};
  auto merged = RunProgram({"sh", "-c", "echo $HOME ${PATH:+path}"}, options);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->out, "/elsewhere path\n");
  options.clean_env = true;
  options.env = {"ONLY=this"};
  auto clean = RunProgram({"/bin/sh", "-c", "echo $ONLY ${HOME:-no-home}"}, options);
  ASSERT_TRUE(clean.ok());
  EXPECT_EQ(clean->out, "this no-home\n");
}

TEST(RunProgramTest, KillsWhatRunsPastItsDeadline) {
  ProgramOptions options;
  options.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(RunProgram({"sleep", "30"}, options).status().message(),
              HasSubstr("did not finish within"));
  // Output closed, still running: the deadline holds all the same.
  EXPECT_THAT(RunProgram({"sh", "-c", "exec >&- 2>&-; sleep 30"}, options).status().message(),
              HasSubstr("did not finish within"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RunProgramTest, SaysWhenThereIsNothingToRun) {
  EXPECT_THAT(RunProgram({"no-such-program-here"}).status().message(), HasSubstr("not found"));
  EXPECT_FALSE(RunProgram({}).ok());
}

}  // namespace
}  // namespace gleaner::agent
