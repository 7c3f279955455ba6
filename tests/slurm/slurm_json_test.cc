#include "slurm/slurm_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gleaner::slurm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TestData(const std::string& name) {
  std::ifstream in(std::string(GLEANER_SOURCE_DIR) + "/tests/slurm/testdata/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Recorded from Slurm 22.05.8 (Debian 12) with tests/testing/local_slurm.sh:
// job 1 holds two GPUs, array task 2_0 (job 3) one, 2_[1-2] waits.
TEST(SlurmJsonTest, ReadsWhatSqueueAndSlurmrestdRecorded) {
  for (const char* file : {"squeue-22.05.json", "slurmrestd-v0.0.38-jobs.json"}) {
    SCOPED_TRACE(file);
    auto doc = ParseSlurmJobs(TestData(file));
    ASSERT_TRUE(doc.ok()) << doc.status().message();
    EXPECT_EQ(doc->slurm_version, "22.05.8");
    EXPECT_TRUE(doc->skipped.empty());
    ASSERT_EQ(doc->jobs.size(), 3u);
    const SlurmJob& first = doc->jobs[0];
    EXPECT_EQ(first.id, "1");
    EXPECT_EQ(first.user, "slurmalice");
    EXPECT_EQ(first.account, "research");
    EXPECT_EQ(first.partition, "scavenger");
    EXPECT_EQ(first.state, "RUNNING");
    EXPECT_TRUE(first.HoldsResources());
    EXPECT_EQ(first.gpu_count, 2);
    ASSERT_TRUE(first.start_time.has_value());
    EXPECT_EQ(first.gpus_by_node.size(), 1u);
    EXPECT_THAT(first.gpus_by_node.begin()->second, ElementsAre(0u, 1u));
    const SlurmJob& task = doc->jobs[1];
    EXPECT_EQ(task.id, "3");
    EXPECT_EQ(task.array_id, "2_0");
    EXPECT_EQ(task.DisplayId(), "2_0 (3)");
    EXPECT_THAT(task.gpus_by_node.begin()->second, ElementsAre(2u));
    const SlurmJob& waiting = doc->jobs[2];
    EXPECT_EQ(waiting.state, "PENDING");
    EXPECT_FALSE(waiting.HoldsResources());
    EXPECT_TRUE(waiting.gpus_by_node.empty());
  }
}

// Slurm 23.02 on writes numbers as objects, states as lists and nodes
// under job_resources.nodes.allocation.
TEST(SlurmJsonTest, ReadsTheNewerSchema) {
  auto doc = ParseSlurmJobs(R"j({
    "meta": {"slurm": {"release": "23.11.4"}}, "errors": [],
    "jobs": [{"job_id": 77, "user_name": "bob", "user_id": 1002, "account": "physics",
              "partition": "gpu", "qos": "normal", "job_state": ["RUNNING"],
              "start_time": {"set": true, "infinite": false, "number": 1700000000},
              "array_job_id": {"set": true, "number": 0},
              "array_task_id": {"set": false, "number": 0},
              "restart_cnt": 2, "nodes": "g[1-2]",
              "job_resources": {"nodes": {"allocation": [{"name": "g1"}, {"name": "g2"}]}},
              "gres_detail": ["gpu:a100:4(IDX:0-3)", "gpu:a100:2(IDX:4,6)"]}]})j");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(doc->slurm_version, "23.11.4");
  ASSERT_EQ(doc->jobs.size(), 1u);
  const SlurmJob& j = doc->jobs[0];
  EXPECT_EQ(j.id, "77");
  EXPECT_TRUE(j.array_id.empty());
  EXPECT_EQ(*j.uid, 1002u);
  EXPECT_EQ(j.qos, "normal");
  EXPECT_EQ(j.restart_count, 2);
  EXPECT_EQ(j.start_time->time_since_epoch(), core::Seconds(1700000000));
  EXPECT_EQ(j.gpu_count, 6);
  EXPECT_THAT(j.gpus_by_node.at("g1"), ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_THAT(j.gpus_by_node.at("g2"), ElementsAre(4u, 6u));
}

TEST(SlurmJsonTest, FallsBackToTheHostListAndTheTresCount) {
  auto doc = ParseSlurmJobs(R"j({"jobs": [
    {"job_id": 5, "job_state": "RUNNING", "nodes": "n[01-02]",
     "gres_detail": ["gpu:1(IDX:0)", "gpu:1(IDX:3)"]},
    {"job_id": 6, "job_state": "RUNNING", "nodes": "n03", "tres_alloc_str": "cpu=4,gres/gpu=2"}]})j");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->jobs.size(), 2u);
  EXPECT_THAT(doc->jobs[0].gpus_by_node.at("n02"), ElementsAre(3u));
  // A version without gres_detail still tells how many GPUs a job holds.
  EXPECT_EQ(doc->jobs[1].gpu_count, 2);
  EXPECT_TRUE(doc->jobs[1].gpus_by_node.empty());
}

TEST(SlurmJsonTest, HowAFinishedJobEndedInEitherSchema) {
  auto doc = ParseSlurmJobs(R"j({"jobs": [
    {"job_id": 1, "job_state": "COMPLETED", "exit_code": 0, "state_reason": "None"},
    {"job_id": 2, "job_state": "FAILED", "exit_code": 768},
    {"job_id": 3, "job_state": "CANCELLED", "exit_code": 15},
    {"job_id": 4, "job_state": ["FAILED"],
     "exit_code": {"status": ["ERROR"], "return_code": {"set": true, "number": 2},
                   "signal": {"id": {"set": false, "number": 0}, "name": ""}}},
    {"job_id": 5, "job_state": ["CANCELLED"],
     "exit_code": {"status": ["SIGNALED"], "return_code": {"set": true, "number": 0},
                   "signal": {"id": {"set": true, "number": 9}, "name": "KILL"}}},
    {"job_id": 6, "job_state": "PENDING", "state_reason": "BeginTime"}]})j");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->jobs.size(), 6u);
  EXPECT_EQ(doc->jobs[0].exit_code, 0);
  EXPECT_EQ(doc->jobs[1].exit_code, 3);
  EXPECT_EQ(doc->jobs[2].exit_signal, 15);
  EXPECT_EQ(doc->jobs[2].exit_code, std::nullopt);
  EXPECT_EQ(doc->jobs[3].exit_code, 2);
  EXPECT_EQ(doc->jobs[4].exit_signal, 9);
  EXPECT_EQ(doc->jobs[5].state_reason, "BeginTime");
  EXPECT_EQ(doc->jobs[5].exit_code, std::nullopt);
}

TEST(SlurmJsonTest, SkipsAJobItCannotReadAndKeepsTheRest) {
  auto doc = ParseSlurmJobs(R"j({"jobs": [
    {"user_name": "nobody-knows"},
    {"job_id": 8, "job_state": "RUNNING", "nodes": "n1",
     "gres_detail": ["gpu:1(IDX:0)", "gpu:1(IDX:1)"]},
    {"job_id": 9, "job_state": "RUNNING", "nodes": "n[1-", "gres_detail": ["gpu:1(IDX:0)"]},
    {"job_id": 10, "job_state": "RUNNING", "nodes": "n1", "gres_detail": ["gpu:1(IDX:0)"]},
    "not a job"]})j");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->jobs.size(), 1u);
  EXPECT_EQ(doc->jobs[0].id, "10");
  ASSERT_EQ(doc->skipped.size(), 3u);
  EXPECT_THAT(doc->skipped[0], HasSubstr("no job_id"));
  EXPECT_THAT(doc->skipped[1], HasSubstr("job 8: it lists 2 GRES details for 1 nodes"));
  EXPECT_THAT(doc->skipped[2], HasSubstr("job 9: Slurm host list"));
}

TEST(SlurmJsonTest, SaysWhatIsWrongWithADocument) {
  auto errors = ParseSlurmJobs(R"j({"errors": [{"description": "Failed while looking for jobs",
    "error": "Unspecified error"}], "jobs": []})j");
  ASSERT_FALSE(errors.ok());
  EXPECT_EQ(errors.status().code(), core::StatusCode::kUnavailable);
  EXPECT_THAT(errors.status().message(),
              HasSubstr("Failed while looking for jobs: Unspecified error"));
  for (const char* bad : {"", "squeue: error: Invalid user", "[]", R"({"meta": {}})",
                          "{\"jobs\": [", R"({"jobs": {}})"}) {
    auto doc = ParseSlurmJobs(bad);
    ASSERT_FALSE(doc.ok()) << bad;
    EXPECT_EQ(doc.status().code(), core::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(ParseSlurmJobs(std::string(10000, '[')).ok());
}

}  // namespace
}  // namespace gleaner::slurm
