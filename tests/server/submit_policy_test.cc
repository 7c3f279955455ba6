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
  classes[sched::PriorityClass::kCritical] = {
      {"dave"}, {"oncall"}, 4, core::Seconds(86400), ClassRule::Approval::kNever};
  classes[sched::PriorityClass::kOpportunistic] = {
      {}, {}, 0, core::Seconds(3600), ClassRule::Approval::kNever};
  return SubmitPolicy(ProjectMembership({}, {}), classes, SessionRule{},
                      [](const std::string& user) {
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

Caller As(const std::string& user) {
  return {user == "root" ? 0u : 1000u, user, false, false, kAllScopes, {}};
}

TEST(SubmitPolicyTest, OnlyThoseAllowedSubmitAClassByNameOrGroup) {
  const SubmitPolicy p = Policy();
  sched::JobSpec critical = Job(sched::PriorityClass::kCritical);
  const core::Status refused = p.Admit(As("alice"), &critical).status();
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

TEST(SubmitPolicyTest, SessionsGetTheirClassAndTimeLimitWhateverTheyAsk) {
  // Sessions are opportunistic here, at most 2 h.
  std::map<sched::PriorityClass, ClassRule> classes;
  classes[sched::PriorityClass::kOpportunistic] = {
      {}, {}, 0, core::Seconds(3 * 3600), ClassRule::Approval::kNever};
  const SubmitPolicy p(ProjectMembership({}, {}), classes,
                       SessionRule{sched::PriorityClass::kOpportunistic, core::Seconds(7200)});
  sched::JobSpec session = Job(sched::PriorityClass::kCritical);
  session.pty = true;
  ASSERT_TRUE(p.Admit(As("alice"), &session).ok());
  EXPECT_EQ(session.priority_class, sched::PriorityClass::kOpportunistic);
  EXPECT_TRUE(session.preemptible);
  EXPECT_EQ(session.max_runtime, core::Seconds(7200));  // none asked: the sessions' limit

  sched::JobSpec longer = Job(sched::PriorityClass::kNormal);
  longer.pty = true;
  longer.max_runtime = core::Seconds(3 * 3600);
  const core::Status refused = p.Admit(As("root"), &longer).status();
  EXPECT_EQ(refused.code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("interactive sessions may run at most 2h"));
  EXPECT_THAT(refused.message(), HasSubstr("[sessions] max_runtime_s"));

  // A batch job is not a session: its class is its own.
  sched::JobSpec batch = Job(sched::PriorityClass::kNormal);
  ASSERT_TRUE(p.Admit(As("alice"), &batch).ok());
  EXPECT_EQ(batch.priority_class, sched::PriorityClass::kNormal);
  EXPECT_FALSE(batch.max_runtime);
}

TEST(SubmitPolicyTest, AClassBoundsItsJobsSizeAndRuntimeForEveryone) {
  const SubmitPolicy p = Policy();
  sched::JobSpec big = Job(sched::PriorityClass::kCritical, 2);
  big.max_gpus = 6;  // elastic up to 6
  const core::Status too_big = p.Admit(As("root"), &big).status();
  EXPECT_EQ(too_big.code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(),
              HasSubstr("critical jobs may use at most 4 GPUs; this one asks for 6"));

  // A gang counts its GPUs on every node, in a range that cannot overflow
  // (the rule is checked before the spec's own ranges).
  sched::JobSpec gang = Job(sched::PriorityClass::kCritical, 2);
  gang.nodes = 3;
  EXPECT_THAT(p.Admit(As("root"), &gang).status().message(),
              HasSubstr("critical jobs may use at most 4 GPUs; this one asks for 6"));
  gang.gpus = 1'000'000;
  gang.nodes = 1'000'000;
  EXPECT_THAT(p.Admit(As("root"), &gang).status().message(),
              HasSubstr("this one asks for 1000000000000"));

  sched::JobSpec unbounded = Job(sched::PriorityClass::kOpportunistic);
  ASSERT_TRUE(p.Admit(As("alice"), &unbounded).ok());
  EXPECT_EQ(unbounded.max_runtime, core::Seconds(3600));  // given its class's limit
  sched::JobSpec long_one = Job(sched::PriorityClass::kOpportunistic);
  long_one.max_runtime = core::Seconds(7200);
  EXPECT_THAT(p.Admit(As("alice"), &long_one).status().message(),
              HasSubstr("opportunistic jobs may run at most 1h00m; this one asks for 2h00m"));
}

// Enforced projects: vision (alice, bob; carol approves) and nlp (bob;
// the nlp-leads group approves). Critical jobs always wait for an
// approver; normal jobs over 2 GPUs wait rather than being refused.
SubmitPolicy Approving() {
  std::map<sched::PriorityClass, ClassRule> classes;
  classes[sched::PriorityClass::kCritical] = {{}, {}, 0, {}, ClassRule::Approval::kAlways};
  classes[sched::PriorityClass::kNormal] = {{}, {}, 2, {}, ClassRule::Approval::kOverLimit};
  const GroupsOf groups = [](const std::string& user) {
    return user == "dan" ? std::vector<std::string>{"dan", "nlp-leads"}
                         : std::vector<std::string>{user};
  };
  return SubmitPolicy(ProjectMembership({{"vision", {"alice", "bob", "carol"}, {}, {"carol"}, {}},
                                         {"nlp", {"bob"}, {}, {}, {"nlp-leads"}}},
                                        {}, groups),
                      classes, SessionRule{}, groups);
}

TEST(SubmitPolicyTest, ARuleCanMakeAJobWaitForTheProjectsApproversInsteadOfRefusingIt) {
  const SubmitPolicy p = Approving();
  sched::JobSpec critical = Job(sched::PriorityClass::kCritical);
  critical.project = "vision";
  auto waits = p.Admit(As("alice"), &critical);
  ASSERT_TRUE(waits.ok()) << waits.status().ToString();
  EXPECT_EQ(*waits,
            "waiting for approval by carol (or root): critical jobs need an approver's yes "
            "([rules.class.critical] approval = \"always\")");
  // An approver's own job, and root's, do not wait.
  EXPECT_EQ(*p.Admit(As("carol"), &critical), "");
  EXPECT_EQ(*p.Admit(As("root"), &critical), "");

  sched::JobSpec big = Job(sched::PriorityClass::kNormal, 4);
  big.project = "nlp";
  auto over = p.Admit(As("bob"), &big);
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  EXPECT_THAT(*over, HasSubstr("waiting for approval by group nlp-leads (or root): gpus: normal "
                               "jobs may use at most 2 GPUs; this one asks for 4"));
  sched::JobSpec small = Job(sched::PriorityClass::kNormal, 2);
  small.project = "nlp";
  EXPECT_EQ(*p.Admit(As("bob"), &small), "");  // within the rule: queued at once

  EXPECT_TRUE(p.MayApprove(As("carol"), "vision"));
  EXPECT_FALSE(p.MayApprove(As("carol"), "nlp"));
  EXPECT_TRUE(p.MayApprove(As("dan"), "nlp"));  // through nlp-leads
  EXPECT_FALSE(p.MayApprove(As("alice"), "vision"));
  EXPECT_TRUE(p.MayApprove(As("root"), "anything"));
}

// A policy that would leave nobody but root able to submit, or to use a
// class, is named line by line (applying it then takes --force).
TEST(LockOutsTest, RulesNamingNobodyThisHostKnowsAreLockOuts) {
  const HostNames names{[](const std::string& u) { return u == "alice"; },
                        [](const std::string& g) { return g == "cv-team"; }};
  ProjectRule vision{"vision", {"alcie"}, {"cv-taem"}, {}, {}};  // both misspelt
  ClassRule critical;
  critical.users = {"bbo"};
  std::map<sched::PriorityClass, ClassRule> classes = {{sched::PriorityClass::kCritical, critical}};
  const auto out = LockOuts({vision}, classes, names);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0], HasSubstr("no [projects.NAME] has a user or group this host knows"));
  EXPECT_THAT(out[1], HasSubstr("[rules.class.critical] names no user or group this host knows"));

  vision.groups = {"cv-team"};                          // one known name opens it
  classes[sched::PriorityClass::kCritical].users = {};  // nobody named: anyone
  EXPECT_TRUE(LockOuts({vision}, classes, names).empty());
  EXPECT_TRUE(LockOuts({}, classes, names).empty());  // no projects: not enforced
  // Those a class rule does not name may still wait for an approver.
  classes[sched::PriorityClass::kCritical].users = {"bbo"};
  classes[sched::PriorityClass::kCritical].approval = ClassRule::Approval::kOverLimit;
  EXPECT_TRUE(LockOuts({vision}, classes, names).empty());
  EXPECT_TRUE(ThisHostNames().user_exists("root"));
  EXPECT_TRUE(ThisHostNames().group_exists("root"));
  EXPECT_FALSE(ThisHostNames().user_exists("no-such-user-here"));
}

}  // namespace
}  // namespace gleaner::server
