// The gleaner binary as a user runs it: exit codes, golden JSON, and the
// real NVML path through the fake driver found by the dynamic linker.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using testing::Gleaner;
using testing::Outcome;
using testing::Slurp;

// What a snapshot says regardless of when and where it was taken.
json Stable(json doc) {
  doc.erase("taken_at");
  doc.erase("host");
  for (json& gpu : doc["gpus"]) {
    if (gpu["verdict"].is_null()) continue;
    for (const char* key : {"since", "since_us", "at_us"}) gpu["verdict"].erase(key);
  }
  return doc;
}

// Drops what only the host's /proc can tell (the fake driver's pids are
// not real processes) and which backend produced it.
json WithoutAttribution(json doc) {
  doc = Stable(std::move(doc));
  doc.erase("source");
  for (json& gpu : doc["gpus"]) {
    for (json& p : gpu["processes"]) {
      p.erase("user");
      p.erase("uid");
      p.erase("command");
    }
  }
  return doc;
}

const std::string kGolden = std::string(GLEANER_SOURCE_DIR) + "/tests/cli/golden/gpus_demo.json";

TEST(GpusBinaryTest, FakeDemoJsonMatchesGolden) {
  Outcome r = Gleaner("gpus --fake demo --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json actual = Stable(json::parse(r.out));
  ASSERT_EQ(actual["gpus"].size(), 8u);
  if (std::getenv("GLEANER_UPDATE_GOLDEN")) std::ofstream(kGolden) << actual.dump(2) << "\n";
  json golden = json::parse(Slurp(kGolden));
  EXPECT_EQ(actual, golden) << "to accept the new output: GLEANER_UPDATE_GOLDEN=1 ctest -R Golden";
}

TEST(GpusBinaryTest, RealLoaderThroughFakeDriverMatchesGolden) {
  for (const char* variant : {"legacy", "v2", "modern", "r535"}) {
    const std::string env = std::string("LD_LIBRARY_PATH=") + GLEANER_FAKE_NVML_DIR + "/" +
                            variant + " GLEANER_FAKE_NVML_SCENARIO=demo GLEANER_FAKE_NVML_TIME_S=0";
    Outcome r = Gleaner("gpus --json", env);
    ASSERT_EQ(r.rc, 0) << variant << ": " << r.err;
    json actual = json::parse(r.out);
    EXPECT_EQ(actual["source"], "nvml");
    EXPECT_EQ(WithoutAttribution(actual), WithoutAttribution(json::parse(Slurp(kGolden))))
        << variant;
  }
}

TEST(GpusBinaryTest, NoDriverExitsNonZeroWithAClearMessage) {
  Outcome r = Gleaner("gpus --nvml-library /nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(r.rc, 3);
  EXPECT_THAT(r.err, HasSubstr("no NVIDIA driver found"));
  // Plain `gleaner gpus` too, unless this machine really has a driver.
  if (void* real = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(real);
    GTEST_SKIP() << "this host has an NVIDIA driver";
  }
  Outcome plain = Gleaner("gpus");
  EXPECT_EQ(plain.rc, 3);
  EXPECT_THAT(plain.err, HasSubstr("no NVIDIA driver found"));
  EXPECT_EQ(plain.out, "");
}

TEST(GpusBinaryTest, VersionNamesTheReleaseAndTheCommitItWasBuiltFrom) {
  Outcome r = Gleaner("--version");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::smatch m;
  const std::regex line(R"(gleaner (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12})(-dirty)?\)\n)");
  ASSERT_TRUE(std::regex_match(r.out, m, line)) << r.out;
  // The commit is one of this checkout's (CI builds from a clone).
  Outcome git = testing::RunBinary(
      "git", "-C " + std::string(GLEANER_SOURCE_DIR) + " cat-file -e " + m[2].str() + "^{commit}");
  EXPECT_EQ(git.rc, 0) << m[2] << " is not a commit of " << GLEANER_SOURCE_DIR;
}

TEST(GpusBinaryTest, UsageErrors) {
  EXPECT_EQ(Gleaner("").rc, 2);
  EXPECT_EQ(Gleaner("gpus --no-such-flag").rc, 2);
  EXPECT_EQ(Gleaner("gpus --watch -1 --fake demo").rc, 2);
  Outcome help = Gleaner("gpus --help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_THAT(help.out, HasSubstr("--fake"));
}

TEST(GpusBinaryTest, WatchEmitsOneJsonDocumentPerLine) {
  Outcome r = Gleaner("gpus --fake demo --json --watch 0.2", "timeout 1.5");
  EXPECT_EQ(r.rc, 124);  // stopped by timeout, not by an error
  std::istringstream lines(r.out);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    if (lines.eof()) break;  // the last line may have been cut off by the timeout
    json doc = json::parse(line);
    EXPECT_EQ(doc["gpus"].size(), 8u);
    EXPECT_EQ(doc["topology"].size(), 28u);  // in every document, not only the first
    ++count;
  }
  EXPECT_GE(count, 2);
}

TEST(GpusBinaryTest, MalformedScenarioFileNamesTheLine) {
  testing::TempDir dir;
  const std::string file = dir.Write("bad.json",
                                     "{\n  \"gpus\": [\n    {\"name\": \"A\",\n"
                                     "     \"memory_total_mib\": -5}\n  ]\n}\n");
  Outcome r = Gleaner("gpus --fake " + file);
  EXPECT_EQ(r.rc, 4);
  EXPECT_THAT(r.err, HasSubstr(file + ":4: gpus[0].memory_total_mib: expected a number from 0"));
}

}  // namespace
}  // namespace gleaner
