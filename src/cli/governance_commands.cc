#include "cli/governance_commands.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/api_client.h"
#include "cli/exit_codes.h"
#include "core/format.h"
#include "core/json_depth.h"

namespace gleaner::cli {

using nlohmann::json;

namespace {

ApiTarget TargetOf(const JobOptions& o) { return {o.server, o.token, o.data_dir, o.tls}; }

// The error an answer carries, as a status.
core::Status AnswerError(int code, const json& doc, const std::string& body) {
  const std::string message =
      doc.is_object() && doc.contains("error") ? doc["error"].value("message", body) : body;
  return code == 400 ? core::InvalidArgument(message) : core::Internal(message);
}

}  // namespace

std::string EventTable(const json& events) {
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %-6s %-18s %-10s %-10s %s", "TIME", "JOB", "EVENT",
                "USER", "BY", "DETAIL");
  std::string out = line;
  for (const json& e : events) {
    const std::string job =
        e["job"].is_number_integer() ? std::to_string(e["job"].get<int64_t>()) : std::string("-");
    std::string detail = e.value("detail", "");
    if (!e["gpus"].empty()) {
      std::string gpus;
      for (const json& g : e["gpus"]) gpus += (gpus.empty() ? "" : ",") + g.get<std::string>();
      detail += " [" + gpus + "]";
    }
    // Each cell one line: a detail holds others' words (a reason, a
    // command), and root reads this table.
    std::snprintf(line, sizeof line, "\n%-20s %-6s %-18s %-10s %-10s %s",
                  core::OneLine(e.value("at", "")).c_str(), job.c_str(),
                  core::OneLine(e.value("kind", "")).c_str(),
                  core::OneLine(e.value("user", "")).c_str(),
                  core::OneLine(e.value("actor", "")).c_str(), core::OneLine(detail).c_str());
    out += line;
  }
  return out;
}

GovernanceCommands AddGovernanceCommands(CLI::App& app, GovernanceOptions& g, JobOptions& o) {
  GovernanceCommands c{};
  c.events = app.add_subcommand(
      "events",
      "What happened, oldest first: jobs' moves, approvals, parks, tokens (yours; all, "
      "as root)");
  c.events->add_option("--since", g.since, "How far back: 30m, 24h, 7d")->capture_default_str();
  c.events->add_option("--user", g.user, "Only this user's (root)");
  c.events->add_option("--kind", g.kind, "Only this kind: submitted, approved, started, ...");
  c.events->add_option("--job", g.job, "Only this job's");
  c.events->add_option("--limit", g.limit, "At most this many (0: all)")->capture_default_str();
  c.approvals =
      app.add_subcommand("approvals", "Jobs waiting for an approval you may give (root: all)");
  c.approve = app.add_subcommand("approve", "Let a job that waits for approval queue");
  c.deny = app.add_subcommand("deny", "Refuse a job that waits for approval");
  for (CLI::App* cmd : {c.approve, c.deny}) {
    cmd->add_option("id", g.id, "Job id")->required();
    cmd->add_option("--reason", g.reason, "Why, for the submitter and the history");
  }
  for (CLI::App* cmd : {c.events, c.approvals, c.approve, c.deny}) {
    cmd->add_flag("--json", o.json, "JSON output");
    cmd->add_option("--data-dir", o.data_dir, "Where `gleaner up` keeps its state");
  }
  return c;
}

int RunEvents(const GovernanceOptions& g, const JobOptions& o, std::ostream& out,
              std::ostream& err) {
  if (g.limit < 0) return Fail(err, core::InvalidArgument("--limit: expected 0 (all) or more"));
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  std::string filters = "since=" + QueryEscape(g.since);
  if (!g.user.empty()) filters += "&user=" + QueryEscape(g.user);
  if (!g.kind.empty()) filters += "&kind=" + QueryEscape(g.kind);
  if (g.job > 0) filters += "&job=" + std::to_string(g.job);
  // Page after page (the server answers one bounded page at a time).
  constexpr int64_t kPage = 1000;
  json events = json::array();
  int64_t after = 0;
  for (;;) {
    const int64_t want =
        g.limit == 0 ? kPage
                     : std::min<int64_t>(kPage, g.limit - static_cast<int64_t>(events.size()));
    std::string target = "/v1/events?limit=" + std::to_string(want) + "&" + filters;
    if (after > 0) target += "&after=" + std::to_string(after);
    auto answer = net::HttpCall(*api, "GET", target, "", o.token);
    if (!answer.ok()) return Fail(err, answer.status());
    const json doc = core::ParseUntrustedJson<json>(answer->second);
    if (answer->first >= 400 || !doc.is_object() || !doc.contains("events")) {
      return Fail(err, AnswerError(answer->first, doc, answer->second));
    }
    for (const json& e : doc["events"]) events.push_back(e);
    if (!doc.contains("next") || (g.limit > 0 && static_cast<int64_t>(events.size()) >= g.limit)) {
      break;
    }
    after = doc["next"].get<int64_t>();
  }
  out << (o.json ? json{{"events", events}}.dump(2) : EventTable(events)) << "\n";
  return kExitOk;
}

int RunApprovals(const JobOptions& o, std::ostream& out, std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  return CallApi(
      *api, o.token, "GET", "/v1/approvals", "", o.json,
      [](const json& doc) {
        char line[512];
        std::snprintf(line, sizeof line, "%-6s %-10s %-12s %-13s %4s  %-20s %s", "ID", "USER",
                      "PROJECT", "CLASS", "GPUS", "SUBMITTED", "WHY IT WAITS");
        std::string text = line;
        for (const json& j : doc["jobs"]) {
          const json& spec = j["spec"];
          std::snprintf(line, sizeof line, "\n%-6lld %-10s %-12s %-13s %4d  %-20s %s",
                        static_cast<long long>(j["id"].get<int64_t>()),
                        j["user"].get<std::string>().c_str(), spec.value("project", "").c_str(),
                        spec.value("priority_class", "").c_str(), spec.value("gpus", 1),
                        j["submitted_at"].get<std::string>().c_str(),
                        j["reason"].get<std::string>().c_str());
          text += line;
        }
        if (doc.value("truncated", false)) text += "\n(more wait: decide these first)";
        return text;
      },
      out, err);
}

int RunDecide(const GovernanceOptions& g, const JobOptions& o, bool approve, std::ostream& out,
              std::ostream& err) {
  auto api = RunningApi(TargetOf(o));
  if (!api.ok()) return Fail(err, api.status());
  const std::string body = g.reason.empty() ? "" : json{{"reason", g.reason}}.dump();
  return CallApi(
      *api, o.token, "POST", "/v1/jobs/" + std::to_string(g.id) + (approve ? "/approve" : "/deny"),
      body, o.json,
      [&](const json& j) {
        return "job " + std::to_string(g.id) + " " + (approve ? "approved" : "denied") +
               ": it is " + j["state"].get<std::string>();
      },
      out, err);
}

}  // namespace gleaner::cli
