#include "sched/job_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "sched/dependencies.h"

namespace gleaner::sched {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(ArraySpecTest, ParsesAndPrints) {
  auto a = ParseArraySpec("0-99%8");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (ArraySpec{0, 99, 1, 8}));
  EXPECT_EQ(a->size(), 100);
  EXPECT_EQ(ArraySpecToString(*a), "0-99%8");
  auto stepped = ParseArraySpec("10-20:5");
  ASSERT_TRUE(stepped.ok());
  EXPECT_EQ(stepped->size(), 3);  // 10, 15, 20
  EXPECT_EQ(ParseArraySpec("7")->size(), 1);
  for (const char* bad : {"", "a-b", "5-2", "0-9%0", "0-9:0", "-3", "0-9%", "1e3"}) {
    EXPECT_FALSE(ParseArraySpec(bad).ok()) << bad;
  }
  EXPECT_THAT(ParseArraySpec("5-2").status().message(), HasSubstr("is before the first"));
}

JobSpec Valid() {
  JobSpec s;
  s.command = {"python", "train.py"};
  return s;
}

TEST(JobSpecTest, ValidationNamesTheFieldAndTheFix) {
  const JobLimits limits;
  EXPECT_TRUE(ValidateJobSpec(Valid(), limits).ok());
  struct Case {
    std::function<void(JobSpec&)> change;
    const char* expected;
  };
  const Case cases[] = {
      {[](JobSpec& s) { s.command.clear(); }, "command: empty"},
      {[](JobSpec& s) { s.gpus = 0; }, "gpus: at least 1, got 0"},
      {[](JobSpec& s) { s.gpus = -2; }, "gpus: at least 1, got -2"},
      {[](JobSpec& s) { s.gpus = 9; }, "gpus: 9 GPUs, but no host here has more than 8"},
      {[](JobSpec& s) { s.working_dir = "relative/dir"; }, "working_dir: must be an absolute path"},
      {[](JobSpec& s) { s.env["CUDA_VISIBLE_DEVICES"] = "0"; }, "set by gleaner"},
      {[](JobSpec& s) { s.env["A=B"] = "x"; }, "env: \"A=B\" is not a variable name"},
      {[](JobSpec& s) { s.priority = 5000; }, "priority: from -1000 to 1000"},
      {[](JobSpec& s) { s.priority_class = PriorityClass::kCritical; }, "never preempted"},
      {[](JobSpec& s) {
         s.priority_class = PriorityClass::kOpportunistic;
         s.preemptible = false;
       },
       "must be preemptible"},
      {[](JobSpec& s) { s.checkpoint_signal = 0; }, "checkpoint_signal"},
      {[](JobSpec& s) { s.grace = core::Seconds(-1); }, "grace_s"},
      {[](JobSpec& s) { s.max_runtime = core::Seconds(0); }, "max_runtime_s"},
      {[](JobSpec& s) {
         s.max_runtime = core::Seconds(10);
         s.expected_runtime = core::Seconds(20);
       },
       "longer than max_runtime_s"},
      {[](JobSpec& s) {
         s.array = ArraySpec{0, 1'000'000, 1, 0};
       },
       "at most 100000 per array"},
      {[](JobSpec& s) {
         s.after_success = {3, 3};
       },
       "after_success: names job 3 twice"},
      {[](JobSpec& s) {
         s.after_success = {3};
         s.after_failure = {3};
       },
       "after_failure: names job 3 twice (one dependency per job)"},
      {[](JobSpec& s) { s.after_success = {0}; }, "job ids are positive"},
      {[](JobSpec& s) { s.after_any = {-2}; }, "after_any: job ids are positive, got -2"},
  };
  for (const Case& c : cases) {
    JobSpec s = Valid();
    c.change(s);
    const core::Status status = ValidateJobSpec(s, limits);
    EXPECT_EQ(status.code(), core::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_THAT(status.message(), HasSubstr(c.expected));
  }
}

TEST(JobSpecTest, JsonRoundTrip) {
  JobSpec s = Valid();
  s.env = {{"WANDB_MODE", "offline"}};
  s.working_dir = "/home/alice/proj";
  s.gpus = 2;
  s.min_gpu_memory = core::Bytes::GiB(40);
  s.gpu_memory = core::Bytes::GiB(20);
  s.gpu_models = {"A100", "H100"};
  s.priority_class = PriorityClass::kOpportunistic;
  s.priority = -5;
  s.checkpoint_signal = 10;
  s.grace = core::Milliseconds(1500);
  s.max_runtime = core::Seconds(7200);
  s.expected_runtime = core::Seconds(3600);
  s.array = ArraySpec{0, 99, 1, 8};
  s.after_success = {12, 13};
  s.after_any = {14};
  s.after_failure = {15};
  s.project = "vision";
  s.labels = {{"sweep", "lr"}};
  auto back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
}

// A gang says so in its JSON; a one-node job's JSON is as it always was.
TEST(JobSpecTest, AGangsNodesRoundTripAndAreChecked) {
  JobSpec s = Valid();
  EXPECT_FALSE(JobSpecToJson(s).contains("nodes"));
  s.nodes = 4;
  s.one_rack = true;
  auto back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  JobLimits cluster;
  cluster.max_nodes = 64;
  EXPECT_TRUE(ValidateJobSpec(s, cluster).ok());
  EXPECT_EQ(ValidateJobSpec(s, JobLimits{}).message(),
            "nodes: 4 nodes, but jobs here span at most 1 (one host: gleaner up)");
  s.max_gpus = 8;
  EXPECT_THAT(ValidateJobSpec(s, cluster).message(), ::testing::HasSubstr("fixed size"));
  s.max_gpus = 0;
  s.nodes = 1;
  EXPECT_THAT(ValidateJobSpec(s, cluster).message(), ::testing::HasSubstr("one_rack: only"));
  s.nodes = 0;
  s.one_rack = false;
  EXPECT_THAT(ValidateJobSpec(s, cluster).message(), ::testing::HasSubstr("at least 1"));
}

// Host CPUs and memory: in the JSON only when asked, thousandths of a CPU
// at the finest, no more than a host could have.
TEST(JobSpecTest, HostCpusAndMemoryRoundTripAndAreChecked) {
  JobSpec s = Valid();
  EXPECT_FALSE(JobSpecToJson(s).contains("cpus"));
  EXPECT_FALSE(JobSpecToJson(s).contains("memory_bytes"));
  s.cpu_milli = 2500;
  s.memory = core::Bytes::GiB(16);
  const nlohmann::json j = JobSpecToJson(s);
  EXPECT_EQ(j.at("cpus"), 2.5);
  EXPECT_EQ(j.at("memory_bytes"), uint64_t{16} << 30);
  auto back = JobSpecFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_TRUE(ValidateJobSpec(s, JobLimits{}).ok());

  nlohmann::json bad = j;
  bad["cpus"] = 0.0001;
  EXPECT_THAT(JobSpecFromJson(bad).status().message(),
              ::testing::HasSubstr("cpus: a non-negative"));
  bad["cpus"] = -1;
  EXPECT_FALSE(JobSpecFromJson(bad).ok());
  bad["cpus"] = "2";
  EXPECT_FALSE(JobSpecFromJson(bad).ok());
  bad = j;
  bad["memory_bytes"] = -5;
  EXPECT_THAT(JobSpecFromJson(bad).status().message(), ::testing::HasSubstr("memory_bytes"));
  s.cpu_milli = 5000 * 1000;
  EXPECT_THAT(ValidateJobSpec(s, JobLimits{}).message(), ::testing::HasSubstr("cpus: from 0.001"));
  s.cpu_milli = 1000;
  s.memory = core::Bytes::GiB(uint64_t{100} * 1024);
  EXPECT_THAT(ValidateJobSpec(s, JobLimits{}).message(),
              ::testing::HasSubstr("memory_bytes: more than any host"));
}

TEST(JobSpecTest, JsonDefaultsAndErrors) {
  auto minimal = JobSpecFromJson(json{{"command", {"sleep", "30"}}});
  ASSERT_TRUE(minimal.ok());
  EXPECT_EQ(minimal->gpus, 1);
  EXPECT_EQ(minimal->priority_class, PriorityClass::kNormal);
  EXPECT_TRUE(minimal->preemptible);
  auto critical = JobSpecFromJson(json{{"command", {"x"}}, {"priority_class", "critical"}});
  ASSERT_TRUE(critical.ok());
  EXPECT_FALSE(critical->preemptible);  // what critical means, unless said otherwise
  EXPECT_TRUE(ValidateJobSpec(*critical, {}).ok());

  const std::pair<json, const char*> bad[] = {
      {json::array(), "must be a JSON object"},
      {json{{"gpus", 1}}, "command: required"},
      {json{{"command", {"x", 3}}}, "every argument must be a string"},
      {json{{"command", {"x"}}, {"gpu", 1}}, "gpu: unknown field"},
      {json{{"command", {"x"}}, {"gpus", "two"}}, "gpus: a whole number"},
      {json{{"command", {"x"}}, {"gpus", 1.5}}, "gpus: a whole number"},
      {json{{"command", {"x"}}, {"gpus", 1e15}}, "gpus: a whole number"},
      {json{{"command", {"x"}}, {"min_gpu_memory_bytes", -1}}, "non-negative number of bytes"},
      {json{{"command", {"x"}}, {"gpu_memory_bytes", 2.5}}, "gpu_memory_bytes: a whole"},
      {json{{"command", {"x"}}, {"priority_class", "urgent"}}, "one of critical, normal"},
      {json{{"command", {"x"}}, {"grace_s", "soon"}}, "grace_s: a number of seconds"},
      {json{{"command", {"x"}}, {"max_runtime_s", 1e300}}, "not a plausible duration"},
      {json{{"command", {"x"}}, {"array", 5}}, "array: a string"},
      {json{{"command", {"x"}}, {"array", "9-1"}}, "is before the first"},
      {json{{"command", {"x"}}, {"env", {{"A", 1}}}}, "wrong type"},
      // A float out of int64's range reached a cast that is undefined
      // behaviour (found by fuzz/job_spec_fuzz.cc).
      {json{{"command", {"x"}}, {"after_success", {3, 1e300}}}, "after_success: job ids are"},
      {json{{"command", {"x"}}, {"after_success", {2.5}}}, "after_success: job ids are"},
      {json{{"command", {"x"}}, {"after_success", 3}}, "after_success: a list of job ids"},
      {json{{"command", {"x"}}, {"after_any", {"7"}}}, "after_any: job ids are whole numbers"},
      {json{{"command", {"x"}}, {"after_failure", "7"}}, "after_failure: a list of job ids"},
  };
  for (const auto& [doc, expected] : bad) {
    auto r = JobSpecFromJson(doc);
    ASSERT_FALSE(r.ok()) << doc.dump();
    EXPECT_THAT(r.status().message(), HasSubstr(expected)) << doc.dump();
  }
}

}  // namespace
}  // namespace gleaner::sched

namespace gleaner::sched {
namespace {

// Slurm's --dependency form, as `gleaner submit --dependency` takes it.
TEST(DependenciesTest, SlurmsFormFillsTheThreeLists) {
  JobSpec s;
  ASSERT_TRUE(AddDependencies("afterok:3:4,afterany:5", &s).ok());
  ASSERT_TRUE(AddDependencies("afternotok:6", &s).ok());
  EXPECT_EQ(s.after_success, (std::vector<JobId>{3, 4}));
  EXPECT_EQ(s.after_any, (std::vector<JobId>{5}));
  EXPECT_EQ(s.after_failure, (std::vector<JobId>{6}));
  const std::vector<Dependency> all = DependenciesOf(s);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(DependencyKindName(all[3].kind), "afternotok");
  EXPECT_EQ(all[3].job, 6);
  EXPECT_FALSE(s.singleton);
  ASSERT_TRUE(AddDependencies("afterok:7,singleton", &s).ok());
  EXPECT_TRUE(s.singleton);
  EXPECT_EQ(s.after_success, (std::vector<JobId>{3, 4, 7}));
}

// A name, for people and for singleton: in the JSON only when given.
TEST(JobSpecTest, ANameAndSingletonRoundTripAndAreChecked) {
  JobSpec s = Valid();
  EXPECT_FALSE(JobSpecToJson(s).contains("name"));
  EXPECT_FALSE(JobSpecToJson(s).contains("singleton"));
  s.singleton = true;
  EXPECT_THAT(ValidateJobSpec(s, JobLimits{}).message(),
              HasSubstr("singleton: a singleton job needs a name"));
  s.name = "nightly-etl";
  EXPECT_TRUE(ValidateJobSpec(s, JobLimits{}).ok());
  auto back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  s.name = "etl\nfake log line";
  EXPECT_THAT(ValidateJobSpec(s, JobLimits{}).message(), HasSubstr("name: printable characters"));
  s.name = std::string(300, 'x');
  EXPECT_THAT(ValidateJobSpec(s, JobLimits{}).message(), HasSubstr("name: 300 bytes"));
}

// An interactive session: in the JSON only when asked, one job on one node.
TEST(JobSpecTest, ASessionRoundTripsAndIsOneJobOnOneNode) {
  JobSpec s = Valid();
  EXPECT_FALSE(JobSpecToJson(s).contains("pty"));
  s.pty = true;
  EXPECT_TRUE(ValidateJobSpec(s, JobLimits{}).ok());
  auto back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  JobLimits limits;
  limits.max_nodes = 4;
  for (const auto& shape : std::vector<std::function<void(JobSpec&)>>{
           [](JobSpec& j) {
             j.array = ArraySpec{0, 3, 1, 0};
           },
           [](JobSpec& j) { j.nodes = 2; },
           [](JobSpec& j) { j.max_gpus = 2; },
       }) {
    JobSpec session = s;
    shape(session);
    EXPECT_THAT(ValidateJobSpec(session, limits).message(),
                HasSubstr("pty: an interactive session is one job on one node"));
  }
  EXPECT_THAT(
      JobSpecFromJson(nlohmann::json{{"command", {"bash"}}, {"pty", "yes"}}).status().message(),
      HasSubstr("type must be boolean"));
}

TEST(DependenciesTest, WhatGleanerCannotMeanIsRefusedWithTheForm) {
  for (const auto& [text, said] : std::vector<std::pair<std::string, std::string>>{
           {"after:3", "has \"after\", which is not a kind gleaner knows"},
           {"singleton:3", "not a kind gleaner knows"},
           {"afterok", "names no job after afterok"},
           {"afterok:", "has \"\" where a job id goes"},
           {"afterok:3x", "has \"3x\" where a job id goes"},
           {"afterok:3,", "has \"\", which is not a kind"},
           {"afterok:3?afterany:4", "uses '?'"},
       }) {
    JobSpec s;
    const core::Status status = AddDependencies(text, &s);
    EXPECT_EQ(status.code(), core::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(status.message(), HasSubstr(said)) << text;
    EXPECT_THAT(status.message(), HasSubstr("as in afterok:12:13,afterany:14")) << text;
  }
}

}  // namespace
}  // namespace gleaner::sched

namespace gleaner::sched {
namespace {

TEST(JobSpecTest, AContainerRoundTripsAndItsMountsAreCheckedAsPodmanReadsThem) {
  JobSpec s = Valid();
  EXPECT_FALSE(JobSpecToJson(s).contains("container"));
  auto data = ParseContainerMount("/data:/data:ro");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(*data, (ContainerMount{"/data", "/data", true}));
  s.container = ContainerSpec{"localhost/mine:1", "", {*data, {"/scratch", "/tmp/out", false}}};
  ASSERT_TRUE(ValidateJobSpec(s, JobLimits{}).ok());
  EXPECT_EQ(JobSpecToJson(s)["container"]["mounts"][1], "/scratch:/tmp/out");
  auto back = JobSpecFromJson(JobSpecToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);

  for (const auto& [text, why] :
       std::vector<std::pair<std::string, std::string>>{{"/data", "expected SOURCE:TARGET[:ro]"},
                                                        {"data:/data", "must be an absolute path"},
                                                        {"/a,b:/data", "':' or ','"},
                                                        {"/a b:/data", "a space"},
                                                        {"/data:/x:y", "':' or ','"}}) {
    EXPECT_THAT(ParseContainerMount(text).status().message(), HasSubstr(why)) << text;
  }
  for (const auto& [change, why] :
       std::vector<std::pair<std::function<void(JobSpec&)>, std::string>>{
           {[](JobSpec& j) { j.container->sif = "/images/a.sif"; }, "not both"},
           {[](JobSpec& j) { j.container->image = ""; }, "not neither"},
           {[](JobSpec& j) { j.container->image = "--privileged"; }, "not an image reference"},
           {[](JobSpec& j) { j.container->image = "ubuntu\n24.04"; }, "not an image reference"},
           {[](JobSpec& j) {
              j.container = ContainerSpec{"", "a.sif", {}};
            },
            "absolute path"},
           {[](JobSpec& j) {
              j.container->mounts.resize(kMaxContainerMounts + 1, {"/a", "/b"});
            },
            "at most 64"},
           {[](JobSpec& j) { j.pty = true; }, "cannot be in a container"},
       }) {
    JobSpec bad = s;
    change(bad);
    EXPECT_THAT(ValidateJobSpec(bad, JobLimits{}).message(), HasSubstr(why));
  }
  EXPECT_THAT(JobSpecFromJson(nlohmann::json{{"command", {"x"}}, {"container", {{"img", "a"}}}})
                  .status()
                  .message(),
              HasSubstr("container img: unknown field"));
  EXPECT_THAT(JobSpecFromJson(nlohmann::json{{"command", {"x"}}, {"container", {{"mounts", {1}}}}})
                  .status()
                  .message(),
              HasSubstr("SOURCE:TARGET"));
}

}  // namespace
}  // namespace gleaner::sched
