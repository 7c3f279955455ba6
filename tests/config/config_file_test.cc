#include "config/config_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::config {
namespace {

using ::testing::HasSubstr;

TEST(ParseConfigTest, ReadsTheTextLoadConfigReads) {
  auto c = ParseConfig("[sampling]\ninterval_s = 10\n[projects]\nalice = \"vision\"\n", "g.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sample_interval, core::Seconds(10));
  EXPECT_EQ(c->project_of_user.at("alice"), "vision");
  EXPECT_THAT(ParseConfig("[sampling]\nrate = 1\n", "g.toml").status().message(),
              HasSubstr("g.toml:2: sampling.rate: unknown key"));
}

// A path that cannot be looked at (here: too long; for a user, a data
// directory they may not enter) is an error that says so, never a crash.
TEST(LoadConfigTest, APathThatCannotBeLookedAtIsAClearError) {
  const std::string path = "/tmp/" + std::string(5000, 'a') + "/gleaner.toml";
  auto c = LoadConfig(path, false);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cannot read the config file /tmp/aaa"));
  EXPECT_THAT(c.status().message(), HasSubstr("File name too long"));
  EXPECT_TRUE(LoadConfig("/nonexistent/gleaner.toml", false).ok());  // the defaults
}

TEST(ParseConfigTest, LimitsAreWholeNumbersWithDocumentedDefaults) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->submit_limits.jobs_per_user, 10'000);
  EXPECT_EQ(defaults->submit_limits.spec_bytes_per_user, int64_t{512} << 20);
  auto c = ParseConfig(
      "[limits]\njobs_per_user = 50\nspec_mib_per_user = 3\njobs_per_project = 0\n", "g.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->submit_limits.jobs_per_user, 50);
  EXPECT_EQ(c->submit_limits.spec_bytes_per_user, 3 << 20);
  EXPECT_EQ(c->submit_limits.jobs_per_project, 0);  // no limit
  EXPECT_EQ(c->submit_limits.spec_bytes_per_project, int64_t{2} << 30);
  for (const char* bad : {"jobs_per_user = 2.5", "jobs_per_user = -1", "jobs_per_user = \"9\"",
                          "spec_mib_per_user = 1e12", "jobs = 5"}) {
    auto refused = ParseConfig(std::string("[limits]\n") + bad + "\n", "g.toml");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("g.toml:2: limits.")) << bad;
  }
}

// toml++ 3.3.0 reached __builtin_unreachable for these (found by
// fuzz/config_fuzz.cc): non-ASCII characters where TOML has no place for
// them, and after a backslash and blanks in a multi-line string.
TEST(ParseConfigTest, ColocationIsOnByDefaultAndCanBeTunedOrSwitchedOff) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  ASSERT_TRUE(defaults->colocation.has_value());
  EXPECT_EQ(defaults->colocation->min_history, core::Seconds(3600));
  auto tuned = ParseConfig(
      "[colocation]\npeak_window_days = 14\nmin_history_s = 7200\nmargin_share = 0.2\n", "g.toml");
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_EQ(tuned->colocation->peak_window, core::Seconds(int64_t{14} * 86400));
  EXPECT_EQ(tuned->colocation->min_history, core::Seconds(7200));
  EXPECT_DOUBLE_EQ(tuned->colocation->margin_share, 0.2);
  auto off = ParseConfig("[colocation]\nenabled = false\n", "g.toml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->colocation.has_value());
  EXPECT_THAT(ParseConfig("[colocation]\nmargin_share = 2\n", "g.toml").status().message(),
              HasSubstr("colocation.margin_share"));
  EXPECT_THAT(ParseConfig("[colocation]\nenabled = \"yes\"\n", "g.toml").status().message(),
              HasSubstr("expected true or false"));
}

TEST(ParseConfigTest, ProjectsAreDefinedWithMembersAndEverythingNamedMustExist) {
  auto c = ParseConfig(
      "[projects]\nalice = \"vision\"\n[projects.vision]\nusers = [\"alice\"]\n"
      "groups = [\"cv\"]\n[projects.nlp]\ngroups = [\"nlp\"]\n"
      "[scheduler.project.nlp]\nguaranteed_gpus = 2\n",
      "g.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->projects.size(), 2u);
  EXPECT_EQ(c->projects[0], (server::ProjectRule{"nlp", {}, {"nlp"}, {}, {}}));
  EXPECT_EQ(c->projects[1], (server::ProjectRule{"vision", {"alice"}, {"cv"}, {}, {}}));
  EXPECT_EQ(c->project_of_user.at("alice"), "vision");
  EXPECT_THAT(ParseConfig("[projects]\nbob = \"nlp\"\n[projects.vision]\nusers = []\n", "g.toml")
                  .status()
                  .message(),
              HasSubstr("the default project \"nlp\" is not defined: add a [projects.nlp] table"));
  EXPECT_THAT(
      ParseConfig("[projects.vision]\nusers = []\n[scheduler.project.nlp]\n"
                  "guaranteed_gpus = 1\n",
                  "g.toml")
          .status()
          .message(),
      HasSubstr("[scheduler] names project \"nlp\", which no [projects.nlp] table defines"));
  EXPECT_THAT(ParseConfig("[projects.vision]\nmembers = []\n", "g.toml").status().message(),
              HasSubstr("projects.vision.members"));
  EXPECT_THAT(ParseConfig("[projects]\nalice = 3\n", "g.toml").status().message(),
              HasSubstr("expected a project name"));
}

TEST(ParseConfigTest, ClassRulesSayWhoAndHowLarge) {
  auto c = ParseConfig(
      "[rules.class.critical]\nusers = [\"dave\"]\ngroups = [\"oncall\"]\nmax_gpus = 4\n"
      "max_runtime_s = 86400\n[rules.class.opportunistic]\nmax_runtime_s = 3600\n",
      "g.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->class_rules.at(sched::PriorityClass::kCritical),
            (server::ClassRule{{"dave"}, {"oncall"}, 4, core::Seconds(86400)}));
  EXPECT_EQ(c->class_rules.at(sched::PriorityClass::kOpportunistic).max_runtime,
            core::Seconds(3600));
  EXPECT_FALSE(c->class_rules.contains(sched::PriorityClass::kNormal));
  EXPECT_THAT(ParseConfig("[rules.class.urgent]\nmax_gpus = 1\n", "g.toml").status().message(),
              HasSubstr("expected [rules.class.critical], [rules.class.normal] or"));
  EXPECT_THAT(ParseConfig("[rules.class.normal]\nmax_gpus = -1\n", "g.toml").status().message(),
              HasSubstr("rules.class.normal.max_gpus"));
  EXPECT_THAT(ParseConfig("[rules]\nlend = 1\n", "g.toml").status().message(),
              HasSubstr("expected a table: [rules.lend]"));
  auto pilot = ParseConfig("[rules.lend]\nhosts = [\"b\"]\ngpus = [\"a:4\", \"a:5\"]\n", "g.toml");
  ASSERT_TRUE(pilot.ok()) << pilot.status().ToString();
  EXPECT_TRUE(pilot->lend_allow.Allows("a", 4, core::GpuUuid("GPU-x")));
  EXPECT_TRUE(pilot->lend_allow.Allows("b", 0, core::GpuUuid("GPU-y")));
  EXPECT_FALSE(pilot->lend_allow.Allows("a", 3, core::GpuUuid("GPU-z")));
  EXPECT_TRUE(observe::LendAllowList{}.Allows("a", 3, core::GpuUuid("GPU-z")));  // no pilot
  EXPECT_THAT(ParseConfig("[rules.lend]\nnodes = []\n", "g.toml").status().message(),
              HasSubstr("rules.lend.nodes"));
}

TEST(ParseConfigTest, ParkingIsOffByDefaultAndSaysWhatIsWrong) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->parking.enabled);
  EXPECT_EQ(defaults->cuda_library, "libcuda.so.1");
  auto on = ParseConfig(
      "[parking]\nenabled = true\npark_idle_timeout_s = 7200\nnotice_s = 300\n"
      "max_park_s = 0\nhost_memory_margin_share = 0.2\nnever_park_users = [\"alice\"]\n"
      "lock_timeout_s = 30\ncuda_library = \"/opt/nvidia/libcuda.so.1\"\n",
      "g.toml");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->parking.enabled);
  EXPECT_EQ(on->parking.park_idle_timeout, core::Seconds(7200));
  EXPECT_EQ(on->parking.notice, core::Seconds(300));
  EXPECT_EQ(on->parking.max_park, core::Duration{});
  EXPECT_DOUBLE_EQ(on->parking.host_memory_margin_share, 0.2);
  EXPECT_EQ(on->parking.never_park_users, std::vector<std::string>{"alice"});
  EXPECT_EQ(on->parking.lock_timeout, core::Seconds(30));
  EXPECT_EQ(on->cuda_library, "/opt/nvidia/libcuda.so.1");
  EXPECT_THAT(ParseConfig("[parking]\npark_idle_timeout_s = 5\n", "g.toml").status().message(),
              HasSubstr("parking.park_idle_timeout_s"));
  EXPECT_THAT(ParseConfig("[parking]\npark_after = 5\n", "g.toml").status().message(),
              HasSubstr("parking.park_after"));
  EXPECT_THAT(ParseConfig("[parking]\ncuda_library = \"\"\n", "g.toml").status().message(),
              HasSubstr("expected the path of libcuda.so.1"));
}

// [host]: what jobs may claim of this host; unset, all of it.
TEST(ParseConfigTest, TheHostsShareForJobsIsSaidInCpusAndASize) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->host, sched::HostResources{});
  auto set = ParseConfig("[host]\ncpus = 12.5\nmemory = \"48G\"\n", "g.toml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->host.cpu_milli, 12'500);
  EXPECT_EQ(set->host.memory, core::Bytes::GiB(48));
  EXPECT_EQ(ParseConfig("[host]\nmemory = \"\"\n", "g.toml")->host.memory, core::Bytes());
  EXPECT_EQ(ParseConfig("[host]\ncpus = 0\n", "g.toml")->host.cpu_milli, 0);  // all of them
  EXPECT_THAT(ParseConfig("[host]\ncpus = -1\n", "g.toml").status().message(),
              HasSubstr("host.cpus: expected a number from 0"));
  EXPECT_THAT(ParseConfig("[host]\nmemory = 48\n", "g.toml").status().message(),
              HasSubstr("host.memory: expected a size"));
  EXPECT_THAT(ParseConfig("[host]\nmemory = \"lots\"\n", "g.toml").status().message(),
              HasSubstr("is not a size"));
  EXPECT_THAT(ParseConfig("[host]\ngpus = 2\n", "g.toml").status().message(),
              HasSubstr("host.gpus: unknown key"));
}

// [sessions]: interactive sessions' class and longest run.
TEST(ParseConfigTest, SessionsGetAClassAndATimeLimit) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->sessions.priority_class, sched::PriorityClass::kNormal);
  EXPECT_EQ(defaults->sessions.max_runtime, core::Seconds(8 * 3600));
  auto set = ParseConfig("[sessions]\nclass = \"opportunistic\"\nmax_runtime_s = 3600\n", "g.toml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->sessions.priority_class, sched::PriorityClass::kOpportunistic);
  EXPECT_EQ(set->sessions.max_runtime, core::Seconds(3600));
  EXPECT_THAT(ParseConfig("[sessions]\nclass = \"urgent\"\n", "g.toml").status().message(),
              HasSubstr("sessions.class: expected \"critical\", \"normal\" or \"opportunistic\""));
  EXPECT_THAT(ParseConfig("[sessions]\nmax_runtime_s = 0\n", "g.toml").status().message(),
              HasSubstr("sessions.max_runtime_s"));
  EXPECT_THAT(ParseConfig("sessions = 3\n", "g.toml").status().message(),
              HasSubstr("expected a table: [sessions]"));
}

TEST(ParseConfigTest, SlurmIsOffByDefaultAndSaysWhatIsWrong) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->slurm.enabled);
  EXPECT_FALSE(defaults->slurm.bridge.enabled);
  EXPECT_EQ(defaults->slurm.squeue, "squeue");
  auto on = ParseConfig(
      "[slurm]\nenabled = true\nnode = \"gpu07\"\nconf = \"/etc/slurm/slurm.conf\"\n"
      "poll_interval_s = 5\nidle_alert_after_s = 3600\nidle_alert_min_gpus = 2\n"
      "bridge = true\nbridge_partition = \"scavenger\"\nbridge_qos = \"lend\"\n",
      "g.toml");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_EQ(on->slurm.node, "gpu07");
  EXPECT_EQ(on->slurm.conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(on->slurm.poll_interval, core::Seconds(5));
  EXPECT_EQ(on->slurm.idle_alert.after, core::Seconds(3600));
  EXPECT_EQ(on->slurm.idle_alert.min_gpus, 2);
  EXPECT_TRUE(on->slurm.bridge.enabled);
  EXPECT_EQ(on->slurm.bridge.partition, "scavenger");
  EXPECT_EQ(on->slurm.bridge.qos, "lend");
  EXPECT_THAT(ParseConfig("[slurm]\nenabled = true\nbridge = true\n", "g.toml").status().message(),
              HasSubstr("bridge_partition"));
  EXPECT_THAT(
      ParseConfig("[slurm]\nslurmrestd = \"http://127.0.0.1:6820\"\n", "g.toml").status().message(),
      HasSubstr("needs token_file"));
  EXPECT_THAT(ParseConfig("[slurm]\nnode = \"a b\"\n", "g.toml").status().message(),
              HasSubstr("cannot be a Slurm name"));
  EXPECT_THAT(ParseConfig("[slurm]\npoll_interval_s = 0\n", "g.toml").status().message(),
              HasSubstr("slurm.poll_interval_s"));
  EXPECT_THAT(ParseConfig("[slurm]\npartition = \"x\"\n", "g.toml").status().message(),
              HasSubstr("slurm.partition"));
  auto acting = ParseConfig(
      "[slurm]\nidle_alert_after_s = 3600\nidle_action = \"requeue\"\nidle_action_after_s = 7200\n",
      "g.toml");
  ASSERT_TRUE(acting.ok()) << acting.status().ToString();
  EXPECT_EQ(acting->slurm.idle_action.action, slurm::IdleAction::kRequeue);
  EXPECT_EQ(acting->slurm.idle_action.after, core::Seconds(7200));
  EXPECT_THAT(ParseConfig("[slurm]\nidle_action = \"kill\"\n", "g.toml").status().message(),
              HasSubstr("expected \"none\", \"requeue\" or \"cancel\""));
  // The owner is alerted before the job is acted on.
  EXPECT_THAT(ParseConfig("[slurm]\nidle_alert_after_s = 3600\nidle_action = \"cancel\"\n"
                          "idle_action_after_s = 60\n",
                          "g.toml")
                  .status()
                  .message(),
              HasSubstr("alerted before"));
}

TEST(ParseConfigTest, NonAsciiOutsideStringsIsAnError) {
  for (const auto& [text, expected] : std::initializer_list<std::pair<const char*, const char*>>{
           {"[\u00e9]\n", "g.toml:1: a non-ASCII character outside a quoted string or a comment"},
           {"[idle]\nbusy_utilization_pct = 5 \u00e2\n", "g.toml:2: a non-ASCII character"},
           {"[projects]\nalice = \"\"\"\\\u00e9\"\"\"\n",
            "g.toml:2: a backslash before a non-ASCII"},
           {"[projects]\nalice = \"\"\"\\\n \xc3\"\"\"\n", "g.toml:3: the text is not valid UTF-8"},
           // toml++ reads this line as one broken token.
           {"[projects]\nalice = 12+'''\u039a'''\n", "g.toml:2:"},
           {"[projects]\nalice = 1'\ufb3f'\n", "g.toml:2:"},
       }) {
    auto c = ParseConfig(text, "g.toml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_THAT(c.status().message(), HasSubstr(expected)) << text;
  }
}

TEST(ParseConfigTest, NonAsciiInStringsAndCommentsIsRead) {
  auto c = ParseConfig(
      "# caf\u00e9\n[projects]\n\"jos\u00e9\" = 'recherche-\u00e9'  # \u00e9\n"
      "alice = \"\"\"\\\n    \u00e9quipe\"\"\"\nbob = \"\"\"x\"\"\"\"\n",
      "g.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->project_of_user.at("jos\u00e9"), "recherche-\u00e9");
  EXPECT_EQ(c->project_of_user.at("alice"), "\u00e9quipe");
  EXPECT_EQ(c->project_of_user.at("bob"), "x\"");
  auto literal = ParseConfig(
      "[projects]\na = 'C:\\\\x \"y\" \u00e9'\nb = '''\n\\\\ \"\u00e9\"\n''''\n", "g.toml");
  ASSERT_TRUE(literal.ok()) << literal.status().ToString();
  EXPECT_EQ(literal->project_of_user.at("a"), "C:\\\\x \"y\" \u00e9");
  EXPECT_EQ(literal->project_of_user.at("b"), "\\\\ \"\u00e9\"\n'");
  // A byte order mark is no character of the document.
  EXPECT_TRUE(ParseConfig("\xEF\xBB\xBF[ui]\nanonymous_read = true\n", "g.toml").ok());
  // Errors after a rewritten string still name their own line.
  EXPECT_THAT(ParseConfig("[projects]\nalice = \"\"\"\\\n\n \u00e9\"\"\"\nbob = 3\n", "g.toml")
                  .status()
                  .message(),
              HasSubstr("g.toml:5: projects.bob: expected a project name"));
}

}  // namespace
}  // namespace gleaner::config

namespace gleaner::config {
namespace {

TEST(ParseConfigTest, ModelsArePricedFromTheOnPremModelAndSpeedsAndTheChoiceCanBeSwitchedOff) {
  auto defaults = ParseConfig("", "g.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->scheduler.cost_aware);
  EXPECT_TRUE(defaults->scheduler.window_aware_placement);
  ASSERT_TRUE(defaults->scheduler.model_price);
  // H100: the default on-prem model's 1.49 per GPU-hour (onprem_test), at
  // the datasheet speed; a T4 has no on-prem defaults, so no price.
  const auto h100 = defaults->scheduler.model_price("NVIDIA H100 80GB HBM3", core::Bytes::GiB(80));
  ASSERT_TRUE(h100);
  EXPECT_NEAR(h100->per_gpu_hour, 1.49, 0.005);
  EXPECT_DOUBLE_EQ(h100->speed, 989.0 / 312);
  EXPECT_FALSE(defaults->scheduler.model_price("Tesla T4", core::Bytes::GiB(16)));

  auto site = ParseConfig(
      "[scheduler]\ncost_aware = false\nwindow_aware_placement = false\n"
      "[cost]\ncurrency = \"CNY\"\n[cost.speed]\n\"H100-80GB\" = 1.9\n"
      "[cost.onprem.T4]\nserver_capex = 20000\nserver_power_kw = 1\ngpu_busy_w = 70\ngpu_idle_w = "
      "10\n",
      "g.toml");
  ASSERT_TRUE(site.ok()) << site.status().ToString();
  EXPECT_FALSE(site->scheduler.cost_aware);
  EXPECT_FALSE(site->scheduler.window_aware_placement);
  EXPECT_EQ(site->scheduler.currency, "CNY");
  const auto measured = site->scheduler.model_price("NVIDIA H100 80GB HBM3", core::Bytes::GiB(80));
  ASSERT_TRUE(measured);
  EXPECT_DOUBLE_EQ(measured->speed, 1.9);
  EXPECT_NEAR(measured->per_gpu_hour, 1.49 * 7.2, 0.05);  // in yuan
  const auto t4 = site->scheduler.model_price("Tesla T4", core::Bytes::GiB(16));
  ASSERT_TRUE(t4);
  EXPECT_EQ(t4->model, "T4");

  EXPECT_THAT(ParseConfig("[cost.speed]\nT4 = 0\n", "g.toml").status().message(),
              HasSubstr("cost.speed.T4: expected the model's speed beside an A100's"));
  EXPECT_THAT(ParseConfig("[cost]\nspeed = 2\n", "g.toml").status().message(),
              HasSubstr("expected [cost.speed]"));
  EXPECT_THAT(ParseConfig("[scheduler]\ncost_aware = 1\n", "g.toml").status().message(),
              HasSubstr("scheduler.cost_aware: expected true or false"));
}

}  // namespace
}  // namespace gleaner::config
