#include "cli/policy_commands.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/api_client.h"
#include "cli/daemon_support.h"
#include "cli/exit_codes.h"
#include "config/catalog_files.h"
#include "config/data_dir.h"
#include "core/json_depth.h"
#include "daemon/daemon_start.h"
#include "report/policy_dry_run.h"
#include "server/event_api.h"

namespace gleaner::cli {

using nlohmann::json;

namespace {

ApiTarget TargetOf(const JobOptions& o) { return {o.server, o.token, o.data_dir, o.tls}; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// GET `path`'s JSON, or why not.
core::Result<json> Fetch(const net::Endpoint& api, const std::string& token,
                         const std::string& path) {
  GLEANER_ASSIGN_OR_RETURN(auto answer, net::HttpCall(api, "GET", path, "", token));
  const json doc = core::ParseUntrustedJson<json>(answer.second);
  if (answer.first >= 400 || !doc.is_object()) {
    const std::string message = doc.is_object() && doc.contains("error")
                                    ? doc["error"].value("message", answer.second)
                                    : answer.second;
    return answer.first == 400 ? core::InvalidArgument(message) : core::Internal(message);
  }
  return doc;
}

core::Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::NotFound("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A version number, or a file: what `gleaner policy diff` compares.
core::Result<std::pair<std::string, std::string>> TextOf(const net::Endpoint& api,
                                                         const std::string& token,
                                                         const std::string& what) {
  const bool number = !what.empty() && std::all_of(what.begin(), what.end(), ::isdigit);
  if (!number) {
    GLEANER_ASSIGN_OR_RETURN(std::string text, ReadFile(what));
    return std::pair{what, text};
  }
  GLEANER_ASSIGN_OR_RETURN(json doc, Fetch(api, token, "/v1/policy/versions/" + what));
  return std::pair{"version " + what, doc["text"].get<std::string>()};
}

std::string AppliedText(const json& j, const char* done) {
  std::string text = std::string(done) + ": policy version " +
                     std::to_string(j["version"].get<int64_t>()) + " is running";
  if (!j["at_restart"].empty()) {
    std::string sections;
    for (const json& s : j["at_restart"]) {
      sections += (sections.empty() ? "[" : ", [") + s.get<std::string>() + "]";
    }
    text += "; " + sections + " changed and take effect at the next restart";
  }
  return text;
}

}  // namespace

std::string LineDiff(const std::string& before, const std::string& after) {
  const std::vector<std::string> a = Lines(before);
  const std::vector<std::string> b = Lines(after);
  // Longest common subsequence, by dynamic programming: config files are
  // small.
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<std::pair<char, std::string>> ops;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ops.emplace_back(' ', a[i++]);
      ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      ops.emplace_back('+', b[j++]);
    } else {
      ops.emplace_back('-', a[i++]);
    }
  }
  // Changed lines with two lines of context; "..." between distant ones.
  constexpr size_t kContext = 2;
  std::vector<bool> shown(ops.size(), false);
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].first == ' ') continue;
    for (size_t c = k >= kContext ? k - kContext : 0; c <= std::min(ops.size() - 1, k + kContext);
         ++c) {
      shown[c] = true;
    }
  }
  std::string out;
  bool gap = false;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!shown[k]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "...\n";
    gap = false;
    out += std::string(1, ops[k].first) + " " + ops[k].second + "\n";
  }
  return out;
}

PolicyCommands AddPolicyCommands(CLI::App& app, PolicyOptions& p, JobOptions& o) {
  CLI::App* policy = app.add_subcommand(
      "policy", "The site's policy (gleaner.toml), versioned: show, list, diff, apply, rollback");
  policy->require_subcommand(1);
  PolicyCommands c{};
  c.show = policy->add_subcommand("show", "The running policy, or version N");
  c.show->add_option("version", p.version, "A version (default: the running one)");
  c.list = policy->add_subcommand("list", "The versions, newest first: who applied each, and why");
  c.diff = policy->add_subcommand(
      "diff", "What changes: diff FILE|N (against the running one), or diff A B");
  c.diff->add_option("what", p.what, "A file or a version number, once or twice")
      ->required()
      ->expected(1, 2);
  c.apply = policy->add_subcommand(
      "apply", "Make FILE the running policy, without a restart (errors change nothing)");
  c.apply->add_option("file", p.file, "The new gleaner.toml")->required();
  c.rollback = policy->add_subcommand(
      "rollback", "Run an earlier version again, as a new version (default: the one before)");
  c.rollback->add_option("version", p.version, "The version to run again");
  for (CLI::App* cmd : {c.apply, c.rollback}) {
    cmd->add_option("--note", p.note, "Why, for the history");
    cmd->add_flag("--force", p.force, "Apply it even if it would lock every user but root out");
  }
  c.dry_run = policy->add_subcommand(
      "dry-run", "Replay this site's recorded history under the running policy and under FILE");
  c.dry_run->add_option("file", p.file, "The candidate gleaner.toml")->required();
  c.dry_run->add_option("--since", p.since, "How much history: 24h, 7d, 30d")
      ->capture_default_str();
  c.dry_run->add_option("--config", p.config,
                        "The running policy's file (default: DATA_DIR/gleaner.toml)");
  for (CLI::App* cmd : {c.show, c.list, c.diff, c.apply, c.rollback, c.dry_run}) {
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_option("--data-dir", o.data_dir, "Where `gleaner up` keeps its state");
  }
  return c;
}

int RunPolicyShow(const PolicyOptions& p, const JobOptions& o, std::ostream& out,
                  std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  return CallApi(
      *api, o.token, "GET",
      p.version > 0 ? "/v1/policy/versions/" + std::to_string(p.version) : "/v1/policy", "", o.json,
      [](const json& j) {
        std::string head = "# policy version " + std::to_string(j["version"].get<int64_t>()) +
                           ", applied " + j["at"].get<std::string>() + " by " +
                           j["author"].get<std::string>();
        if (!j["note"].get<std::string>().empty()) head += ": " + j["note"].get<std::string>();
        std::string text = j["text"].get<std::string>();
        if (!text.empty() && text.back() == '\n') text.pop_back();
        return head + "\n" + text;
      },
      out, err);
}

int RunPolicyList(const JobOptions& o, std::ostream& out, std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  return CallApi(
      *api, o.token, "GET", "/v1/policy/versions", "", o.json,
      [](const json& doc) {
        char line[512];
        std::snprintf(line, sizeof line, "%-8s %-21s %-14s %s", "VERSION", "APPLIED", "BY", "WHY");
        std::string text = line;
        const int64_t active = doc["active"].get<int64_t>();
        for (const json& v : doc["versions"]) {
          const int64_t n = v["version"].get<int64_t>();
          const std::string version = std::to_string(n) + (n == active ? " *" : "");
          std::snprintf(line, sizeof line, "\n%-8s %-21s %-14s %s", version.c_str(),
                        v["at"].get<std::string>().c_str(), v["author"].get<std::string>().c_str(),
                        v["note"].get<std::string>().c_str());
          text += line;
        }
        return text + "\n(* running)";
      },
      out, err);
}

int RunPolicyDiff(const PolicyOptions& p, const JobOptions& o, std::ostream& out,
                  std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  core::Result<std::pair<std::string, std::string>> before = std::pair<std::string, std::string>();
  if (p.what.size() == 2) {
    before = TextOf(*api, o.token, p.what[0]);
  } else if (auto running = Fetch(*api, o.token, "/v1/policy"); running.ok()) {
    before =
        std::pair{"version " + std::to_string((*running)["version"].get<int64_t>()) + " (running)",
                  (*running)["text"].get<std::string>()};
  } else {
    before = running.status();
  }
  if (!before.ok()) return Fail(err, before.status());
  auto after = TextOf(*api, o.token, p.what.back());
  if (!after.ok()) return Fail(err, after.status());
  const std::string diff = LineDiff(before->second, after->second);
  if (o.json) {
    out << json{{"from", before->first}, {"to", after->first}, {"diff", diff}}.dump(2) << "\n";
  } else if (diff.empty()) {
    out << before->first << " and " << after->first << " are the same\n";
  } else {
    out << "--- " << before->first << "\n+++ " << after->first << "\n" << diff;
  }
  return kExitOk;
}

int RunPolicyApply(const PolicyOptions& p, const JobOptions& o, std::ostream& out,
                   std::ostream& err) {
  auto text = ReadFile(p.file);
  if (!text.ok()) return Fail(err, text.status());
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  json body = {{"text", *text}, {"name", p.file}};
  if (!p.note.empty()) body["note"] = p.note;
  if (p.force) body["force"] = true;
  return CallApi(
      *api, o.token, "POST", "/v1/policy", body.dump(), o.json,
      [](const json& j) { return AppliedText(j, "applied"); }, out, err);
}

int RunPolicyDryRun(const PolicyOptions& p, const JobOptions& o, std::ostream& out,
                    std::ostream& err) {
  auto age = server::ParseAge(p.since);
  if (!age.ok()) return Fail(err, core::InvalidArgument("--" + age.status().message()));
  const std::string running = config::ConfigPath(config::DataDir(o.data_dir), p.config);
  auto current = config::LoadConfig(running, false);
  if (!current.ok()) return Fail(err, current.status());
  auto text = ReadFile(p.file);
  if (!text.ok()) return Fail(err, text.status());
  auto candidate = config::ParseConfig(*text, p.file);
  if (!candidate.ok()) return Fail(err, candidate.status());
  auto store = daemon::OpenHistory(config::DataDir(o.data_dir));
  if (!store.ok()) return Fail(err, store.status());
  // Money is a part of the answer: without the site's catalog, none.
  auto catalog = config::LoadCatalog(current->cost.catalog_files);
  if (!catalog.ok()) {
    err << "gleaner: no money in the dry-run: " << catalog.status().message() << "\n";
    catalog = cost::Catalog();
  }
  const core::TimePoint now = core::RealClock().Now();
  auto run = report::RunDryRun(**store, *current, *candidate, *catalog, now - *age, now);
  if (!run.ok()) return Fail(err, run.status());
  run->current_name = "running (" + running + ")";
  run->candidate_name = p.file;
  out << (o.json ? report::DryRunJson(*run).dump(2) : report::DryRunText(*run)) << "\n";
  return kExitOk;
}

int RunPolicyRollback(const PolicyOptions& p, const JobOptions& o, std::ostream& out,
                      std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  json body = json::object();
  if (p.version > 0) body["version"] = p.version;
  if (!p.note.empty()) body["note"] = p.note;
  if (p.force) body["force"] = true;
  return CallApi(
      *api, o.token, "POST", "/v1/policy/rollback", body.dump(), o.json,
      [](const json& j) { return AppliedText(j, "rolled back"); }, out, err);
}

}  // namespace gleaner::cli
