// DAG files: defaults, sweeps expanded into a job per combination, the
// order dependencies need, and errors that name the file and the job.
#include "cli/dag_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kTuning = R"(
[defaults]
gpus = 1
project = "vision"

[[job]]
name = "eval"
command = ["python", "eval.py"]
after = ["train"]
after_any = ["prep"]

[[job]]
name = "train"
command = ["python", "train.py", "--lr={lr}", "--bs", "{bs}"]
after = ["prep"]
sweep = { lr = [0.001, 0.0003], bs = ["32", "64"] }
gpus = 2

[[job]]
name = "prep"
command = ["python", "prep.py"]
cpus = 4
memory_bytes = 17179869184
)";

TEST(DagFileTest, SweepsExpandAndJobsComeAfterWhatTheyName) {
  auto jobs = ParseDagFile(kTuning, "sweep.toml");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<std::string> names;
  for (const DagJob& j : *jobs) names.push_back(j.spec.name);
  // Parameters in name order, the last changing fastest.
  EXPECT_THAT(names, ElementsAre("prep", "train[bs=32,lr=0.001]", "train[bs=32,lr=0.0003]",
                                 "train[bs=64,lr=0.001]", "train[bs=64,lr=0.0003]", "eval"));
  const DagJob& prep = jobs->front();
  EXPECT_EQ(prep.spec.cpu_milli, 4000);
  EXPECT_EQ(prep.spec.project, "vision");  // from [defaults]
  EXPECT_TRUE(prep.after.empty());
  const DagJob& train = (*jobs)[2];
  EXPECT_EQ(train.group, "train");
  EXPECT_EQ(train.spec.gpus, 2);  // its own field over the default
  EXPECT_THAT(train.spec.command, ElementsAre("python", "train.py", "--lr=0.0003", "--bs", "32"));
  EXPECT_EQ(train.spec.env.at("lr"), "0.0003");
  EXPECT_EQ(train.spec.env.at("bs"), "32");
  ASSERT_EQ(train.after.size(), 1u);
  EXPECT_EQ(train.after[0].first, sched::DependencyKind::kAfterOk);
  EXPECT_EQ(train.after[0].second, "prep");
  const DagJob& eval = jobs->back();
  ASSERT_EQ(eval.after.size(), 2u);
  EXPECT_EQ(eval.after[1].first, sched::DependencyKind::kAfterAny);
}

TEST(DagFileTest, MistakesAreNamedWithTheFileAndTheJob) {
  const std::pair<const char*, const char*> cases[] = {
      {"[[job]]\ncommand = [\"true\"]\n", "sweep.toml: job (unnamed): every job needs a name"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\n[[job]]\nname = \"a\"\ncommand = [\"true\"]\n",
       "job \"a\": the name is used twice"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\nafter = [\"b\"]\n",
       "job \"a\" waits for \"b\", which the file does not name"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\nafter = [\"b\"]\n"
       "[[job]]\nname = \"b\"\ncommand = [\"true\"]\nafter_any = [\"a\"]\n",
       "the jobs a, b wait for one another in a cycle"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\nafter = [\"a\"]\n", "waits for itself"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\ngpu = 2\n", "job \"a\": gpu: unknown field"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\nsweep = { lr = [] }\n",
       "sweep.lr: a list of values"},
      {"[jobs]\nname = \"a\"\n", "unknown table [jobs]"},
      // What only ValidateJobSpec checks is found before anything is sent.
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\ngrace_s = 5000\n",
       "job \"a\": grace_s: from 0 to 3600 seconds"},
      {"[[job]]\nname = \"a\"\ncommand = [\"true\"]\nsweep = { x = [\"1\\n2\"] }\n",
       "job \"a[x=1\n2]\": name: printable characters only"},
      {"[defaults]\ngpus = 1\n", "no [[job]] tables"},
      {"[[job]\nname = 1\n", "sweep.toml:1:"},
  };
  for (const auto& [text, said] : cases) {
    auto jobs = ParseDagFile(text, "sweep.toml");
    ASSERT_FALSE(jobs.ok()) << text;
    EXPECT_EQ(jobs.status().code(), core::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(jobs.status().message(), HasSubstr(said)) << text;
  }
}

// Counted, not expanded: four lists of 100 would be 10^8 jobs.
TEST(DagFileTest, AHugeSweepIsRefusedBeforeItIsExpanded) {
  std::string values;
  for (int i = 0; i < 100; ++i) values += (i ? ", " : "") + std::to_string(i);
  const std::string text = "[[job]]\nname = \"huge\"\ncommand = [\"true\"]\nsweep = { a = [" +
                           values + "], b = [" + values + "], c = [" + values + "], d = [" +
                           values + "] }\n";
  auto jobs = ParseDagFile(text, "sweep.toml");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("more than 10000 jobs"));
}

TEST(DagFileTest, ASweepCannotExpandPastTheLimit) {
  std::string values;
  for (int i = 0; i < 101; ++i) values += (i ? ", " : "") + std::to_string(i);
  const std::string text = "[[job]]\nname = \"big\"\ncommand = [\"true\"]\nsweep = { a = [" +
                           values + "], b = [" + values + "] }\n";
  auto jobs = ParseDagFile(text, "sweep.toml");
  ASSERT_FALSE(jobs.ok());
  EXPECT_THAT(jobs.status().message(), HasSubstr("more than 10000 jobs"));
}

}  // namespace
}  // namespace gleaner::cli
