// What a submit must satisfy beyond a well-formed spec: its project, and
// its class's rules (who may submit it, how large and how long).
#include "server/submit_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;

// Critical work is for the on-call group and dave, on at most 4 GPUs for at
// most a day; opportunistic work runs at most an hour. Projects are labels.
SubmitPolicy Policy() {
  std::map<sched::PriorityClass, ClassRule> classes;
  classes[sched::PriorityClass::kCritical] = {{"dave"}, {"oncall"}, 4, core::Seconds(86400)};
  classes[sched::PriorityClass::kOpportunistic] = {{}, {}, 0, core::Seconds(3600)};
  return SubmitPolicy(ProjectMembership({}, {}), classes, [](const std::string& user) {
    return user == "erin" ? std::vector<std::string>{"erin", "oncall"}
                          : std::vector<std::string>{user};
  });
}

sched::JobSpec Job(sched::PriorityClass c, int gpus = 1) {
  sched::JobSpec s;
  s.priority_class = c;
  s.gpus = gpus;
  return s;
}

Caller As(const std::string& user) { return {user == "root" ? 0u : 1000u, user, false, false}; }

TEST(SubmitPolicyTest, OnlyThoseAllowedSubmitAClassByNameOrGroup) {
  const SubmitPolicy p = Policy();
  sched::JobSpec critical = Job(sched::PriorityClass::kCritical);
  const core::Status refused = p.Admit(As("alice"), &critical);
  EXPECT_EQ(refused.code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.message(),
              HasSubstr("alice may not submit critical jobs ([rules.class.critical] in "
                        "gleaner.toml says who may); submit it as normal"));
  EXPECT_TRUE(p.Admit(As("dave"), &critical).ok());
  EXPECT_TRUE(p.Admit(As("erin"), &critical).ok());  // through oncall
  EXPECT_TRUE(p.Admit(As("root"), &critical).ok());
  sched::JobSpec normal = Job(sched::PriorityClass::kNormal, 8);
  EXPECT_TRUE(p.Admit(As("alice"), &normal).ok());  // no rule for normal
}

TEST(SubmitPolicyTest, AClassBoundsItsJobsSizeAndRuntimeForEveryone) {
  const SubmitPolicy p = Policy();
  sched::JobSpec big = Job(sched::PriorityClass::kCritical, 2);
  big.max_gpus = 6;  // elastic up to 6
  const core::Status too_big = p.Admit(As("root"), &big);
  EXPECT_EQ(too_big.code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(),
              HasSubstr("critical jobs may use at most 4 GPUs; this one asks for 6"));

  sched::JobSpec unbounded = Job(sched::PriorityClass::kOpportunistic);
  ASSERT_TRUE(p.Admit(As("alice"), &unbounded).ok());
  EXPECT_EQ(unbounded.max_runtime, core::Seconds(3600));  // given its class's limit
  sched::JobSpec long_one = Job(sched::PriorityClass::kOpportunistic);
  long_one.max_runtime = core::Seconds(7200);
  EXPECT_THAT(p.Admit(As("alice"), &long_one).message(),
              HasSubstr("opportunistic jobs may run at most 1h00m; this one asks for 2h00m"));
}

}  // namespace
}  // namespace gleaner::server
