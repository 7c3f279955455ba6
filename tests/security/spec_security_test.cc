// A job spec says exactly what runs: values that would be silently
// changed on the way (wrapped integers, cut strings) are refused instead.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/json_depth.h"
#include "sched/job_spec.h"

namespace gleaner::sched {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The error for `field` set to `value` in an otherwise good spec.
std::string ErrorFor(const std::string& field, const json& value) {
  json doc = {{"command", {"true"}}};
  doc[field] = value;
  auto spec = JobSpecFromJson(doc);
  if (!spec.ok()) return spec.status().message();
  core::Status s = ValidateJobSpec(*spec, JobLimits{});
  return s.ok() ? "" : s.message();
}

TEST(SpecSecurityTest, IntegersAreWholeAndInRangeNeverWrapped) {
  // 4294967305 wrapped to 9: a checkpoint "signal" of SIGKILL.
  EXPECT_THAT(ErrorFor("checkpoint_signal", 4294967305ULL), HasSubstr("from 1 to 64"));
  EXPECT_THAT(ErrorFor("checkpoint_signal", 18446744073709551615ULL), HasSubstr("from 1 to 64"));
  EXPECT_THAT(ErrorFor("priority", 5.9), HasSubstr("a whole number"));
  EXPECT_THAT(ErrorFor("gpus", 1.5), HasSubstr("a whole number"));
  EXPECT_THAT(ErrorFor("max_gpus", -1), HasSubstr("from 0"));
  EXPECT_EQ(ErrorFor("priority", 7), "");
}

TEST(SpecSecurityTest, NulBytesAndOverlongStringsAreRefusedInEveryField) {
  const std::string nul("a\0b", 3);
  EXPECT_THAT(ErrorFor("working_dir", "/tmp/" + nul), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("env", {{"X", nul}}), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("project", nul), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("labels", {{"k", nul}}), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("gpu_models", {nul}), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("command", {"true", nul}), HasSubstr("NUL"));
  EXPECT_THAT(ErrorFor("project", std::string(1000, 'p')), HasSubstr("at most 256"));
  EXPECT_THAT(ErrorFor("working_dir", "/" + std::string(300, 'x')),
              HasSubstr("component is longer than 255"));
  EXPECT_THAT(ErrorFor("working_dir", "/" + std::string(5000, 'x')), HasSubstr("at most 4095"));
  EXPECT_THAT(ErrorFor("working_dir", "relative"), HasSubstr("absolute"));
}

TEST(SpecSecurityTest, DeeplyNestedJsonIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(core::NestsDeeperThan(deep));
  EXPECT_TRUE(core::ParseUntrustedJson<json>(deep).is_discarded());
  // Brackets inside strings do not count.
  const std::string quoted = "{\"a\": \"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_FALSE(core::NestsDeeperThan(quoted));
  EXPECT_FALSE(core::ParseUntrustedJson<json>(quoted).is_discarded());
}

}  // namespace
}  // namespace gleaner::sched
