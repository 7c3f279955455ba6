#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::server {

// One [projects.NAME] table of gleaner.toml: who may charge jobs to it.
struct ProjectRule {
  std::string name;
  std::vector<std::string> users;
  std::vector<std::string> groups;  // Unix groups: their members are in
  // Who decides its jobs that wait for approval (root always may).
  std::vector<std::string> approvers;
  std::vector<std::string> approver_groups;
  bool operator==(const ProjectRule&) const = default;
};

// The Unix groups `user` belongs to (primary and supplementary), by name;
// empty for a user this host does not know.
std::vector<std::string> UnixGroupsOf(const std::string& user);
using GroupsOf = std::function<std::vector<std::string>(const std::string& user)>;

// A user as gleaner.toml's rules list people: by name, or through a Unix
// group. The groups are read once, and only when no name settles it.
class ListedUser {
 public:
  ListedUser(std::string user, const GroupsOf& groups_of)
      : user_(std::move(user)), groups_of_(groups_of) {}
  bool In(const std::vector<std::string>& users, const std::vector<std::string>& groups);

 private:
  std::string user_;
  const GroupsOf& groups_of_;
  std::optional<std::vector<std::string>> groups_;
};

// Which project a submitted job is charged to (docs/projects.md). With no
// [projects.NAME] defined, projects are labels: a job gets the one it
// names, or its user's default ([projects] alice = "vision"). Once any is
// defined they are enforced, so that quotas and fair share cannot be
// dodged by typing another project's name: a user may charge only the
// projects they are in (by name or by group), root any.
class ProjectMembership {
 public:
  ProjectMembership(std::vector<ProjectRule> projects,
                    std::map<std::string, std::string> default_of_user,
                    GroupsOf groups_of = UnixGroupsOf);

  bool enforced() const { return !projects_.empty(); }

  // The project a job of `user` that asks for `asked` (empty: none) is
  // charged to, or why it may not be submitted: an unknown project, one
  // the user is not in, or none to choose from.
  core::Result<std::string> Resolve(const std::string& user, bool admin,
                                    const std::string& asked) const;

  // The projects `user` is in, by name.
  std::vector<std::string> ProjectsOf(const std::string& user) const;

  // Whether `user` may approve `project`'s jobs (root aside), and who may,
  // by name and group, in words: "carol, group leads"; "" for none.
  bool IsApprover(const std::string& user, const std::string& project) const;
  std::string ApproversOf(const std::string& project) const;
  // Those listed by name, for notices.
  std::vector<std::string> ApproverNames(const std::string& project) const;
  // The projects whose jobs `user` may approve (root aside).
  std::vector<std::string> ApprovedBy(const std::string& user) const;

 private:
  const ProjectRule* Find(const std::string& project) const;

  std::vector<ProjectRule> projects_;  // sorted by name
  std::map<std::string, std::string> default_of_user_;
  GroupsOf groups_of_;
};

}  // namespace gleaner::server
