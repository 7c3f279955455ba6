#include "core/group_commit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

namespace gleaner::core {
namespace {

using ::testing::HasSubstr;

std::string Failed(const std::exception& e) { return std::string("failed: ") + e.what(); }

TEST(GroupCommitTest, EveryCallerGetsItsOwnAnswerAndWaitersShareABatch) {
  std::atomic<int> batches = 0;
  std::atomic<bool> first = true;
  GroupCommit<int, std::string> commit(
      [&](std::vector<int*>& batch) {
        ++batches;
        // The first batch is slow, so the others queue behind it.
        if (first.exchange(false)) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::vector<std::string> answers;
        for (int* item : batch) answers.push_back("saved " + std::to_string(*item));
        return answers;
      },
      Failed);
  constexpr int kCallers = 16;
  std::vector<std::string> answers(kCallers);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] { answers[static_cast<size_t>(i)] = commit.Submit(i); });
    if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i)
    EXPECT_EQ(answers[static_cast<size_t>(i)], "saved " + std::to_string(i));
  // The first alone, then (nearly) everyone queued behind it together.
  EXPECT_LT(batches.load(), kCallers);
}

TEST(GroupCommitTest, AWriteThatThrowsAnswersItsBatchAndTheNextProceeds) {
  bool fail = true;
  GroupCommit<int, std::string> commit(
      [&](std::vector<int*>& batch) -> std::vector<std::string> {
        if (fail) throw std::runtime_error("disk full");
        return std::vector<std::string>(batch.size(), "saved");
      },
      Failed);
  EXPECT_EQ(commit.Submit(1), "failed: disk full");
  fail = false;
  EXPECT_EQ(commit.Submit(2), "saved");
}

TEST(GroupCommitTest, AWriteThatAnswersTooFewIsAFailureNotAHang) {
  GroupCommit<int, std::string> commit(
      [](std::vector<int*>&) { return std::vector<std::string>{}; }, Failed);
  EXPECT_THAT(commit.Submit(1), HasSubstr("a batch of 1 got 0 answers"));
}

}  // namespace
}  // namespace gleaner::core
