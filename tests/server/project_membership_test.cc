// Which project a job is charged to: labels until projects are defined,
// then only the projects its user is in (by name or by Unix group), with
// a reason for every refusal.
#include "server/project_membership.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gleaner::server {
namespace {

using ::testing::HasSubstr;

// alice is in vision by name; bob in vision and nlp through his groups;
// carol in no project.
ProjectMembership Enforced(std::map<std::string, std::string> defaults = {}) {
  return ProjectMembership({{"vision", {"alice"}, {"cv-team"}, {"carol"}, {}},
                            {"nlp", {}, {"nlp-team"}, {}, {"nlp-leads"}}},
                           std::move(defaults),
                           [](const std::string& user) -> std::vector<std::string> {
                             if (user == "bob") return {"bob", "cv-team", "nlp-team"};
                             return {user};
                           });
}

TEST(ProjectMembershipTest, WithoutProjectsDefinedAProjectIsALabel) {
  const ProjectMembership labels({}, {{"alice", "vision"}});
  EXPECT_FALSE(labels.enforced());
  EXPECT_EQ(*labels.Resolve("carol", false, "anything"), "anything");
  EXPECT_EQ(*labels.Resolve("alice", false, ""), "vision");  // her default
  EXPECT_EQ(*labels.Resolve("carol", false, ""), "");
}

TEST(ProjectMembershipTest, OnlyTheProjectsAUserIsInByNameOrGroup) {
  const ProjectMembership p = Enforced();
  EXPECT_EQ(p.ProjectsOf("bob"), (std::vector<std::string>{"nlp", "vision"}));
  EXPECT_EQ(*p.Resolve("alice", false, "vision"), "vision");
  EXPECT_EQ(*p.Resolve("alice", false, ""), "vision");  // her only one
  EXPECT_EQ(*p.Resolve("bob", false, "nlp"), "nlp");

  const auto dodged = p.Resolve("alice", false, "nlp");
  EXPECT_EQ(dodged.status().code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(dodged.status().message(),
              HasSubstr("alice is not in project nlp, so its quota and share are not alice's to "
                        "use; alice's projects: vision"));
  const auto typo = p.Resolve("alice", false, "visoin");
  EXPECT_EQ(typo.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_THAT(typo.status().message(),
              HasSubstr("there is no project \"visoin\"; the projects are nlp, vision"));
  EXPECT_THAT(p.Resolve("bob", false, "").status().message(),
              HasSubstr("bob is in projects nlp, vision: choose one with --project"));
  const auto outsider = p.Resolve("carol", false, "");
  EXPECT_EQ(outsider.status().code(), core::StatusCode::kPermissionDenied);
  EXPECT_THAT(outsider.status().message(), HasSubstr("carol is in no project"));
  // Root charges any project, and its own work to none.
  EXPECT_EQ(*p.Resolve("root", true, "nlp"), "nlp");
  EXPECT_EQ(*p.Resolve("root", true, ""), "");
}

TEST(ProjectMembershipTest, ADefaultProjectChoosesAmongAUsersProjects) {
  const ProjectMembership p = Enforced({{"bob", "nlp"}, {"carol", "vision"}});
  EXPECT_EQ(*p.Resolve("bob", false, ""), "nlp");
  // A default is no membership: carol is still in no project.
  EXPECT_EQ(p.Resolve("carol", false, "").status().code(), core::StatusCode::kPermissionDenied);
}

// The real group lookup: root is in group root; an unknown user in none.
TEST(UnixGroupsTest, ReadsTheGroupDatabase) {
  const std::vector<std::string> root = UnixGroupsOf("root");
  EXPECT_NE(std::find(root.begin(), root.end(), "root"), root.end());
  EXPECT_TRUE(UnixGroupsOf("no-such-user-gleaner").empty());
}

}  // namespace
}  // namespace gleaner::server
