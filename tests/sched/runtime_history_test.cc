#include "sched/runtime_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sched/job_request.h"

namespace gleaner::sched {
namespace {

core::Duration Min(int64_t m) { return core::Seconds(m * 60); }

TEST(RuntimeHistoryTest, TheCommandIsTheProgramAndItsScript) {
  EXPECT_EQ(CommandKey({"/usr/bin/python3", "-u", "/home/a/train.py", "--lr", "0.1"}),
            "python3 train.py");
  EXPECT_EQ(CommandKey({"./sweep.sh"}), "sweep.sh");
  EXPECT_EQ(CommandKey({}), "");
  // A huge argument makes a key no longer than a file name.
  EXPECT_EQ(CommandKey({"sh", "-c", std::string(100'000, 'x')}).size(), 3 + 255u);
}

TEST(RuntimeHistoryTest, TheMostSpecificKeyWithEnoughRunsAnswers) {
  RuntimeHistory h;
  const RuntimeKey train{"alice", "vision", "python train.py"};
  const RuntimeKey eval{"alice", "vision", "python eval.py"};
  for (int m : {50, 60, 70, 80, 90}) h.Add(train, Min(m));
  EXPECT_FALSE(h.Predict({"bob", "vision", "python train.py"}));  // never another user's runs

  auto g = h.Predict(train);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->p50, Min(70));
  EXPECT_EQ(g->p80, Min(80));
  EXPECT_EQ(g->runs, 5);
  EXPECT_EQ(g->basis, "p80 of 5 runs of python train.py by alice");

  // Two runs of eval.py are too few: the project's runs answer.
  h.Add(eval, Min(2));
  h.Add(eval, Min(3));
  g = h.Predict(eval);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->runs, 7);
  EXPECT_EQ(g->basis, "p80 of 7 runs in project vision by alice");
  h.Add(eval, Min(4));
  EXPECT_EQ(h.Predict(eval)->p80, Min(4));

  // The same command in another project, then anything of the user's.
  EXPECT_EQ(h.Predict({"alice", "nlp", "python train.py"})->basis,
            "p80 of 5 runs of python train.py by alice");
  EXPECT_EQ(h.Predict({"alice", "nlp", "bash"})->basis, "p80 of 8 runs by alice");
}

TEST(RuntimeHistoryTest, OnlyTheNewestRunsAndTheRecentlyUsedKeysAreKept) {
  RuntimeHistory h({.min_runs = 1, .per_key = 3, .max_keys = 2});
  const RuntimeKey a{"alice", "", "a"};
  for (int m : {100, 100, 100, 5, 5, 5}) h.Add(a, Min(m));
  EXPECT_EQ(h.Predict(a)->p80, Min(5));  // the old runs are forgotten
  h.Add({"bob", "", "b"}, Min(1));
  h.Add(a, Min(5));  // alice's keys are the most recently used again
  h.Add({"carol", "", "c"}, Min(1));
  EXPECT_FALSE(h.Predict({"bob", "", "b"}));
  EXPECT_TRUE(h.Predict(a));
  EXPECT_TRUE(h.Predict({"carol", "", "c"}));
  h.Add(a, core::Seconds(0));  // nothing ran: ignored
  EXPECT_EQ(h.Predict(a)->runs, 3);
}

TEST(RuntimeHistoryTest, ARequestTakesTheDeclaredRuntimeThenTheHistoryCappedByItsLimit) {
  RuntimeHistory h;
  JobSpec spec;
  spec.command = {"python", "train.py"};
  for (int i = 0; i < 3; ++i) h.Add(RuntimeKeyOf(spec, "alice"), Min(60));

  JobRequest r = RequestFromSpec(1, spec, "alice", &h);
  EXPECT_EQ(r.runtime_guess, Min(60));
  EXPECT_EQ(r.runtime_basis, "p80 of 3 runs of python train.py by alice");

  spec.max_runtime = Min(30);
  r = RequestFromSpec(1, spec, "alice", &h);
  EXPECT_EQ(r.runtime_guess, Min(30));
  EXPECT_EQ(r.runtime_basis,
            "p80 of 3 runs of python train.py by alice, capped by its max_runtime");

  r = RequestFromSpec(1, spec, "bob", &h);
  EXPECT_EQ(r.runtime_guess, Min(30));
  EXPECT_EQ(r.runtime_basis, "its max_runtime");

  spec.expected_runtime = Min(20);
  r = RequestFromSpec(1, spec, "alice", &h);
  EXPECT_EQ(r.runtime_guess, Min(20));
  EXPECT_EQ(r.runtime_basis, "declared");

  EXPECT_EQ(RequestFromSpec(1, JobSpec{}, "alice").runtime_guess, core::Duration{});
}

}  // namespace
}  // namespace gleaner::sched
