// Others' GPU processes as a user (or an anonymous reader) sees them: the
// program, not the command line, which may hold a password.
#include "server/process_privacy.h"

#include <gtest/gtest.h>

namespace gleaner::server {
namespace {

using nlohmann::json;

json Host() {
  return {{"gpus",
           {{{"processes",
              {{{"user", "alice"}, {"command", "/usr/bin/python3 t.py --password=hunter2"}},
               {{"user", "bob"}, {"command", "./serve --key abc"}},
               {{"user", nullptr}, {"command", "secret-tool --token x"}}}}}}}};
}

TEST(ProcessPrivacyTest, OnlyTheViewersOwnCommandsStayWhole) {
  json doc = Host();
  HideOthersCommands(doc, "alice");
  const json& p = doc["gpus"][0]["processes"];
  EXPECT_EQ(p[0]["command"], "/usr/bin/python3 t.py --password=hunter2");
  EXPECT_EQ(p[1]["command"], "serve");
  EXPECT_EQ(p[1]["user"], "bob");
  EXPECT_EQ(p[2]["command"], "secret-tool");
  EXPECT_EQ(doc["commands_hidden"], true);
}

TEST(ProcessPrivacyTest, AnAnonymousReaderAndEveryHostOfAClusterAreCovered) {
  json cluster = {{"hosts", {Host(), Host()}}};
  HideOthersCommands(cluster, "");
  for (const json& host : cluster["hosts"]) {
    for (const json& p : host["gpus"][0]["processes"]) {
      EXPECT_EQ(p["command"].get<std::string>().find(' '), std::string::npos) << p.dump();
    }
  }
}

}  // namespace
}  // namespace gleaner::server
