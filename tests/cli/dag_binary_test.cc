// `gleaner submit --dag` against a running gleaner up: a sweep's jobs get
// their parameters, a job named after the sweep waits for all of it, and a
// file with a mistake submits nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "testing/gleaner_up.h"
#include "testing/run_gleaner.h"
#include "testing/temp_dir.h"

namespace gleaner {
namespace {

using nlohmann::json;
using testing::Gleaner;
using ::testing::HasSubstr;

TEST(DagBinaryTest, ASweepRunsAfterItsPrepAndTheReportAfterTheWholeSweep) {
  testing::TempDir dir;
  const std::string data = (dir.path() / "state").string();
  const std::string config =
      dir.Write("g.toml", "[idle]\nidle_after_s = 1\n[sampling]\ninterval_s = 0.2\n");
  const std::string pid_file = (dir.path() / "up.pid").string();
  ASSERT_EQ(std::system((std::string(GLEANER_BINARY) + " up --fake demo --data-dir " + data +
                         " --config " + config + " --for 60 >" + (dir.path() / "up.log").string() +
                         " 2>&1 & echo $! >" + pid_file)
                            .c_str()),
            0);
  const testing::KillOnExit up(pid_file);
  for (int i = 0; i < 400 && Gleaner("--data-dir " + data + " queue --json").rc != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string out = (dir.path() / "out").string();
  const std::string broken = dir.Write("broken.toml",
                                       "[[job]]\nname = \"a\"\ncommand = [\"true\"]\n"
                                       "[[job]]\nname = \"b\"\ncommand = [\"true\"]\n"
                                       "after = [\"c\"]\n");
  const testing::Outcome refused = Gleaner("--data-dir " + data + " submit --dag " + broken);
  EXPECT_EQ(refused.rc, 4) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("job \"b\" waits for \"c\", which the file does not name"));
  EXPECT_EQ(json::parse(Gleaner("--data-dir " + data + " queue --all --json").out)["jobs"].size(),
            0u);

  const std::string file =
      dir.Write("sweep.toml",
                "[defaults]\ngpus = 1\n\n"
                "[[job]]\nname = \"report\"\ncommand = [\"sh\", \"-c\", \"echo report >> " +
                    out +
                    "\"]\nafter = [\"train\"]\n\n"
                    "[[job]]\nname = \"train\"\ncommand = [\"sh\", \"-c\", \"echo $lr {lr} >> " +
                    out +
                    "\"]\nafter = [\"prep\"]\nsweep = { lr = [\"a\", \"b\"] }\n\n"
                    "[[job]]\nname = \"prep\"\ncommand = [\"sh\", \"-c\", \"echo prep >> " +
                    out + "\"]\n");
  const testing::Outcome submitted = Gleaner("--data-dir " + data + " submit --dag " + file);
  ASSERT_EQ(submitted.rc, 0) << submitted.err;
  EXPECT_EQ(submitted.out,
            "submitted job 1 (prep)\nsubmitted job 2 (train[lr=a])\n"
            "submitted job 3 (train[lr=b])\nsubmitted job 4 (report)\n");
  const json report = json::parse(Gleaner("--data-dir " + data + " show 4").out);
  EXPECT_EQ(report["spec"]["after_success"], json({2, 3}));
  EXPECT_EQ(report["spec"]["name"], "report");
  for (int i = 0; i < 600; ++i) {
    if (json::parse(Gleaner("--data-dir " + data + " show 4").out)["state"] == "succeeded") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string lines = testing::Slurp(out);
  // prep first, the sweep's two in either order, the report last.
  EXPECT_TRUE(lines == "prep\na a\nb b\nreport\n" || lines == "prep\nb b\na a\nreport\n") << lines;
}

}  // namespace
}  // namespace gleaner
