#include "server/project_membership.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

namespace gleaner::server {
namespace {

std::string Listed(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

bool Contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

std::vector<std::string> UnixGroupsOf(const std::string& user) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return {};
  }
  // A user in more groups than this is rare; getgrouplist says how many.
  int count = 64;
  std::vector<gid_t> gids(static_cast<size_t>(count));
  if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &count) < 0) {
    gids.resize(static_cast<size_t>(count));
    if (getgrouplist(user.c_str(), pw.pw_gid, gids.data(), &count) < 0) return {};
  }
  gids.resize(static_cast<size_t>(count));
  std::vector<std::string> names;
  for (gid_t gid : gids) {
    group gr{};
    group* g = nullptr;
    if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &g) == 0 && g != nullptr) {
      names.emplace_back(g->gr_name);
    }
  }
  return names;
}

ProjectMembership::ProjectMembership(std::vector<ProjectRule> projects,
                                     std::map<std::string, std::string> default_of_user,
                                     GroupsOf groups_of)
    : projects_(std::move(projects)),
      default_of_user_(std::move(default_of_user)),
      groups_of_(std::move(groups_of)) {
  std::sort(projects_.begin(), projects_.end(),
            [](const ProjectRule& a, const ProjectRule& b) { return a.name < b.name; });
}

bool ListedUser::In(const std::vector<std::string>& users, const std::vector<std::string>& groups) {
  if (Contains(users, user_)) return true;
  if (groups.empty()) return false;
  if (!groups_) groups_ = groups_of_(user_);
  return std::any_of(groups.begin(), groups.end(),
                     [&](const std::string& g) { return Contains(*groups_, g); });
}

std::vector<std::string> ProjectMembership::ProjectsOf(const std::string& user) const {
  ListedUser listed(user, groups_of_);
  std::vector<std::string> in;
  for (const ProjectRule& p : projects_) {
    if (listed.In(p.users, p.groups)) in.push_back(p.name);
  }
  return in;
}

const ProjectRule* ProjectMembership::Find(const std::string& project) const {
  const auto it =
      std::lower_bound(projects_.begin(), projects_.end(), project,
                       [](const ProjectRule& p, const std::string& name) { return p.name < name; });
  return it != projects_.end() && it->name == project ? &*it : nullptr;
}

bool ProjectMembership::IsApprover(const std::string& user, const std::string& project) const {
  const ProjectRule* p = Find(project);
  return p != nullptr && ListedUser(user, groups_of_).In(p->approvers, p->approver_groups);
}

std::string ProjectMembership::ApproversOf(const std::string& project) const {
  const ProjectRule* p = Find(project);
  if (p == nullptr) return "";
  std::vector<std::string> who = p->approvers;
  for (const std::string& g : p->approver_groups) who.push_back("group " + g);
  return who.empty() ? "" : Listed(who);
}

std::vector<std::string> ProjectMembership::ApproverNames(const std::string& project) const {
  const ProjectRule* p = Find(project);
  return p == nullptr ? std::vector<std::string>{} : p->approvers;
}

std::vector<std::string> ProjectMembership::ApprovedBy(const std::string& user) const {
  ListedUser listed(user, groups_of_);
  std::vector<std::string> projects;
  for (const ProjectRule& p : projects_) {
    if (listed.In(p.approvers, p.approver_groups)) projects.push_back(p.name);
  }
  return projects;
}

core::Result<std::string> ProjectMembership::Resolve(const std::string& user, bool admin,
                                                     const std::string& asked) const {
  const auto fallback = default_of_user_.find(user);
  if (!enforced()) {
    return asked.empty() && fallback != default_of_user_.end() ? fallback->second : asked;
  }
  std::vector<std::string> all;
  for (const ProjectRule& p : projects_) all.push_back(p.name);
  if (!asked.empty() && !Contains(all, asked)) {
    return core::InvalidArgument("project: there is no project \"" + asked +
                                 "\"; the projects are " + Listed(all));
  }
  const std::vector<std::string> mine = ProjectsOf(user);
  if (!asked.empty()) {
    if (admin || Contains(mine, asked)) return asked;
    return core::PermissionDenied(
        "project: " + user + " is not in project " + asked + ", so its quota and share are not " +
        user + "'s to use; " + user + "'s projects: " + Listed(mine) +
        " (an admin adds members in [projects." + asked + "] of gleaner.toml)");
  }
  if (fallback != default_of_user_.end() && (admin || Contains(mine, fallback->second))) {
    return fallback->second;
  }
  if (mine.size() == 1) return mine.front();
  if (mine.empty()) {
    if (admin) return std::string();  // root's own work belongs to no project
    return core::PermissionDenied("project: " + user +
                                  " is in no project, and jobs are charged to one; an admin "
                                  "adds users (or their groups) in [projects.NAME] of "
                                  "gleaner.toml");
  }
  return core::InvalidArgument("project: " + user + " is in projects " + Listed(mine) +
                               ": choose one with --project");
}

}  // namespace gleaner::server
