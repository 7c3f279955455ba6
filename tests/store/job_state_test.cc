// The job states and the moves between them, whatever the backend.
#include <gtest/gtest.h>

#include "store/job_store.h"

namespace gleaner::store {
namespace {

TEST(JobStateTest, NamesRoundTrip) {
  for (JobState s : {JobState::kQueued, JobState::kHeld, JobState::kRunning, JobState::kVacating,
                     JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
  EXPECT_FALSE(ParseJobState("paused").has_value());
}

TEST(JobStateTest, OnlyLiveJobsMove) {
  EXPECT_TRUE(CanTransition(JobState::kQueued, JobState::kRunning));
  EXPECT_TRUE(CanTransition(JobState::kRunning, JobState::kQueued));  // re-adopting a lost job
  EXPECT_TRUE(CanTransition(JobState::kVacating, JobState::kQueued));
  EXPECT_FALSE(CanTransition(JobState::kHeld, JobState::kRunning));
  EXPECT_FALSE(CanTransition(JobState::kQueued, JobState::kSucceeded));
  for (JobState final_state : {JobState::kSucceeded, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_TRUE(IsFinal(final_state));
    EXPECT_FALSE(CanTransition(final_state, JobState::kQueued));
  }
  EXPECT_FALSE(IsFinal(JobState::kVacating));
}

}  // namespace
}  // namespace gleaner::store
