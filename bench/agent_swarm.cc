// Thousands of emulated agents against a real coordinator over HTTP: how
// fast agents join, how many reports a second it sustains and how long each
// takes, the time from a job's submit to its agent being told to start it,
// and, when the leader is killed meanwhile (bench/cluster.sh), how long
// agents went without an answer. Each emulated agent reports once a second
// with GPUs that are idle and lendable, starts what it is told (no process:
// the job "runs" for --job-seconds) and reports its start and end. As
// `gleaner agent` does, each keeps its connections open and long-polls
// /v1/agents/wait, reporting at once when the coordinator has orders for it
// (--keep-alive 0 and --long-poll 0 turn either off, for comparison). The
// once-a-second reports share --threads threads; a report the long poll
// asks for goes at once from that agent's own long-poll thread, as a real
// agent's does (--woken-report-own 0: it waits its turn on the shared
// threads, as it did before, for comparison).
// With --minutes 1 each agent also sends its GPUs' minutes once a minute,
// as `gleaner agent` does: MinuteSendDelay after each minute of the wall
// clock ends, by its run name (--spread-minutes 0: all in the first report
// after the minute ends, as agents did before), until a reply acknowledges
// them.
//
//   agent_swarm --server http(s)://127.0.0.1:7380[,URL] --join-tokens F
//               --token glt_... --agents 2000 --seconds 60 [--ca-file CA]
//
// Prints one JSON object: the figures docs/benchmarks.md records.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/node_agent.h"
#include "cluster/agent_protocol.h"
#include "core/clock.h"
#include "net/http_client.h"
#include "net/tls.h"

namespace {

using gleaner::cluster::AgentReply;
using gleaner::cluster::AgentReport;
using gleaner::cluster::JobAttempt;
using gleaner::cluster::JobEvent;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  std::vector<gleaner::net::Endpoint> servers;
  std::vector<std::string> join_tokens;  // agent i joins as emu-i with the i-th
  std::string token;
  int agents = 1000;
  int gpus = 8;
  int threads = 64;
  double seconds = 60;
  double jobs_per_second = 20;
  double job_seconds = 5;
  bool keep_alive = true;
  bool long_poll = true;
  bool minutes = false;          // each agent's 8 GPU minutes, once a minute
  bool spread_minutes = true;    // each MinuteSendDelay after the minute ends
  bool woken_report_own = true;  // a woken agent reports from its long-poll thread
};

// One client per coordinator, for one thread. `source`: a loopback address
// of its own where the servers are on loopback, since a server limits the
// connections of each address, as real agents each have theirs.
using Clients = std::vector<std::unique_ptr<gleaner::net::HttpClient>>;

Clients ClientsOf(const Options& o, uint32_t source) {
  Clients out;
  for (gleaner::net::Endpoint e : o.servers) {
    if (e.host.rfind("127.", 0) == 0) {
      e.source = "127." + std::to_string(1 + source / 65536 % 254) + "." +
                 std::to_string(source / 256 % 256) + "." + std::to_string(1 + source % 254);
    }
    out.push_back(std::make_unique<gleaner::net::HttpClient>(e));
    out.back()->set_keep_alive(o.keep_alive);
  }
  return out;
}

// The HTTP bytes every client sent and received, and the connections it opened.
struct Wire {
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> connections{0};
  void Add(const Clients& clients) {
    for (const auto& c : clients) {
      bytes += c->bytes_sent() + c->bytes_received();
      connections += c->connections();
    }
  }
};

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Posts to the servers in turn until one answers 200.
std::optional<json> Post(Clients& clients, size_t& current, const std::string& target,
                         const std::string& body, const std::string& token,
                         gleaner::core::Duration timeout = gleaner::core::Seconds(5)) {
  for (size_t tried = 0; tried < clients.size(); ++tried) {
    auto answer = clients[current]->Call("POST", target, body, token, timeout);
    if (answer.ok() && (answer->first == 200 || answer->first == 201)) {
      return json::parse(answer->second, nullptr, false);
    }
    current = (current + 1) % clients.size();
  }
  return std::nullopt;
}

struct Agent {
  std::string name;
  std::string credential;
  size_t server = 0;
  bool inventory = true;
  Clock::time_point next_report;
  Clock::time_point last_ok;
  int64_t seq = 0;
  std::vector<JobEvent> outbox;
  std::map<gleaner::sched::JobId, std::pair<JobAttempt, Clock::time_point>> running;  // until
  std::string run;                                      // AgentReport::run
  bool answered = false;                                // a report of it was answered
  std::vector<gleaner::observe::MinuteRollup> minutes;  // not yet acknowledged
  size_t minutes_sent = 0;                              // in the report under way
  int64_t minute_s = 0;                                 // the wall clock's last minute seen
  std::atomic<uint64_t> orders{0};  // from the last reply; the long poll waits past it
  std::atomic<bool> woken{false};   // the long poll says: report now
  std::mutex mu;                    // one report at a time (shared threads, long-poll thread)
};

// Where a long poll wakes the thread that reports for its agent.
struct Wakeup {
  std::mutex mu;
  std::condition_variable cv;
  bool any = false;
};

struct Shared {
  std::mutex mu;
  std::map<gleaner::sched::JobId, Clock::time_point> submitted;
  std::vector<double> submit_to_start;
  std::vector<double> report_latency;
  std::vector<double> outages;  // per agent: the longest time without an answer
  int64_t reports_ok = 0;
  int64_t reports_failed = 0;
  int64_t report_bytes = 0;
};

std::vector<gleaner::cluster::InventoryGpu> InventoryOf(const Agent& a, const Options& o) {
  std::vector<gleaner::cluster::InventoryGpu> inv;
  for (int g = 0; g < o.gpus; ++g) {
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08x-0000-4000-8000-%012x",
                  static_cast<unsigned>(std::hash<std::string>()(a.name)), g);
    inv.push_back({gleaner::core::GpuUuid(uuid), g, "NVIDIA H100 80GB HBM3",
                   gleaner::core::Bytes::GiB(80), 0});
  }
  return inv;
}

AgentReport ReportOf(Agent& a, const Options& o) {
  AgentReport r;
  if (a.inventory) r.inventory = InventoryOf(a, o);
  for (int g = 0; g < o.gpus; ++g) {
    r.gpus.push_back({gleaner::observe::GpuState::kIdle, true, true, 0.0, 512, 70.0, 31.0});
  }
  for (const auto& [id, run] : a.running) r.running.push_back(run.first);
  r.events = a.outbox;
  if (o.minutes) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    const int64_t now_s = now_ms / 1000;
    if (a.minute_s != 0 && now_s / 60 != a.minute_s / 60) {  // a minute ended: one per GPU
      for (const gleaner::cluster::InventoryGpu& g : InventoryOf(a, o)) {
        gleaner::observe::MinuteRollup m;
        m.uuid = g.uuid;
        m.minute = gleaner::core::FromUnixMicros((now_s / 60 - 1) * 60 * 1'000'000);
        m.samples = 60;
        m.state = gleaner::observe::GpuState::kIdle;
        m.observed = m.idle = gleaner::core::Seconds(60);
        a.minutes.push_back(m);
      }
    }
    a.minute_s = now_s;
    const int64_t delay_ms = o.spread_minutes
                                 ? std::chrono::duration_cast<std::chrono::milliseconds>(
                                       gleaner::agent::MinuteSendDelay(a.run))
                                       .count()
                                 : 0;
    const bool due =
        !a.minutes.empty() &&
        now_ms >= gleaner::core::ToUnixMicros(a.minutes.front().minute) / 1000 + 60'000 + delay_ms;
    a.minutes_sent = due ? a.minutes.size() : 0;
    if (due) r.minutes = a.minutes;
    r.run = a.run;
  }
  return r;
}

// What one thread's reports came to.
struct Tally {
  std::vector<double> latencies;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t bytes = 0;
};

bool Obey(Agent& a, const AgentReply& reply, const Options& o, Shared& shared);

// One report of `a` (its mutex held) and what the reply says. Returns the
// time since its last answer when answered, and sets `again` when it
// started a job: the start is reported at once, as `gleaner agent` does.
std::optional<double> ReportNow(Agent& a, Clients& clients, const Options& o, Shared& shared,
                                Tally& tally, std::atomic<size_t>& answered, bool& again) {
  again = false;
  const std::string body = gleaner::cluster::ReportToJson(ReportOf(a, o)).dump();
  tally.bytes += static_cast<int64_t>(body.size());
  const auto sent = Clock::now();
  auto reply = Post(clients, a.server, "/v1/agents/report", body, a.credential);
  const double took = Since(sent);
  auto decoded = reply ? gleaner::cluster::ReplyFromJson(*reply)
                       : gleaner::core::Result<AgentReply>(gleaner::core::Unavailable(""));
  if (!decoded.ok()) {
    ++tally.failed;
    return std::nullopt;
  }
  ++tally.ok;
  if (!a.answered) {
    a.answered = true;
    ++answered;
  }
  tally.latencies.push_back(took);
  const double gap = std::chrono::duration<double>(sent - a.last_ok).count();
  a.last_ok = Clock::now();
  a.orders = decoded->orders;
  again = Obey(a, *decoded, o, shared);
  return gap;
}

// True when it started a job.
bool Obey(Agent& a, const AgentReply& reply, const Options& o, Shared& shared) {
  bool started = false;
  a.inventory = reply.send_inventory;
  a.minutes.erase(a.minutes.begin(),
                  a.minutes.begin() + static_cast<std::ptrdiff_t>(a.minutes_sent));  // acknowledged
  a.minutes_sent = 0;
  std::erase_if(a.outbox, [&](const JobEvent& e) { return e.seq <= reply.acked; });
  const auto now = Clock::now();
  for (const gleaner::cluster::JobToStart& s : reply.start) {
    if (a.running.contains(s.of.job)) continue;
    started = true;
    a.running[s.of.job] = {s.of, now + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.job_seconds))};
    JobEvent e;
    e.seq = ++a.seq;
    e.of = s.of;
    e.kind = JobEvent::Kind::kStarted;
    e.at = gleaner::core::RealClock().Now();
    e.pid = 1;
    a.outbox.push_back(e);
    std::lock_guard lock(shared.mu);
    if (auto sub = shared.submitted.find(s.of.job); sub != shared.submitted.end()) {
      shared.submit_to_start.push_back(std::chrono::duration<double>(now - sub->second).count());
      shared.submitted.erase(sub);
    }
  }
  for (auto it = a.running.begin(); it != a.running.end();) {
    if (now < it->second.second) {
      ++it;
      continue;
    }
    JobEvent e;
    e.seq = ++a.seq;
    e.of = it->second.first;
    e.kind = JobEvent::Kind::kExited;
    e.at = gleaner::core::RealClock().Now();
    e.exit_code = 0;
    a.outbox.push_back(e);
    it = a.running.erase(it);
  }
  return started;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string servers;
  std::string tokens_file;
  std::string ca_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--server")
      servers = v;
    else if (k == "--join-tokens")
      tokens_file = v;
    else if (k == "--token")
      o.token = v;
    else if (k == "--agents")
      o.agents = std::stoi(v);
    else if (k == "--gpus")
      o.gpus = std::stoi(v);
    else if (k == "--threads")
      o.threads = std::stoi(v);
    else if (k == "--seconds")
      o.seconds = std::stod(v);
    else if (k == "--jobs-per-second")
      o.jobs_per_second = std::stod(v);
    else if (k == "--job-seconds")
      o.job_seconds = std::stod(v);
    else if (k == "--keep-alive")
      o.keep_alive = v != "0";
    else if (k == "--long-poll")
      o.long_poll = v != "0";
    else if (k == "--minutes")
      o.minutes = v != "0";
    else if (k == "--spread-minutes")
      o.spread_minutes = v != "0";
    else if (k == "--woken-report-own")
      o.woken_report_own = v != "0";
    else if (k == "--ca-file")
      ca_file = v;
    else {
      std::cerr << "agent_swarm: unknown option " << k << "\n";
      return 2;
    }
  }
  std::stringstream list(servers);
  for (std::string url; std::getline(list, url, ',');) {
    auto e = gleaner::net::ParseServerUrl(url);
    if (!e.ok()) {
      std::cerr << "agent_swarm: " << e.status().message() << "\n";
      return 2;
    }
    if (!ca_file.empty()) {
      auto tls = gleaner::net::TlsContext::ForClient({.ca = ca_file});
      if (!tls.ok()) {
        std::cerr << "agent_swarm: " << tls.status().message() << "\n";
        return 2;
      }
      e->tls_context = *tls;
    }
    o.servers.push_back(*e);
  }
  std::ifstream in(tokens_file);
  for (std::string token; in >> token;) o.join_tokens.push_back(token);
  if (o.servers.empty() || o.token.empty() ||
      o.join_tokens.size() < static_cast<size_t>(o.agents)) {
    std::cerr << "agent_swarm: --server, --token and --join-tokens (one join token a line, for "
                 "emu-0, emu-1, ... in order, as many as --agents) are required\n";
    return 2;
  }

  std::vector<Agent> agents(static_cast<size_t>(o.agents));
  for (int i = 0; i < o.agents; ++i) {
    agents[static_cast<size_t>(i)].name = "emu-" + std::to_string(i);
    char run[17];
    std::snprintf(run, sizeof run, "%016x", static_cast<unsigned>(i));
    agents[static_cast<size_t>(i)].run = run;
  }
  const int threads = std::min(o.threads, o.agents);
  const auto each = [&](const std::function<void(Agent&, Clients&)>& body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        Clients clients = ClientsOf(o, static_cast<uint32_t>(t));
        for (size_t i = static_cast<size_t>(t); i < agents.size();
             i += static_cast<size_t>(threads)) {
          body(agents[i], clients);
        }
      });
    }
    for (std::thread& th : pool) th.join();
  };

  // Joining.
  const auto join_start = Clock::now();
  std::atomic<int> joined{0};
  each([&](Agent& a, Clients& clients) {
    const std::string& token = o.join_tokens[static_cast<size_t>(&a - agents.data())];
    auto j = Post(clients, a.server, "/v1/agents/join",
                  json{{"name", a.name}, {"join_token", token}}.dump(), "");
    if (j && j->contains("credential")) {
      a.credential = (*j)["credential"];
      ++joined;
    }
  });
  const double join_s = Since(join_start);

  // Reporting, once a second each, spread over the second; jobs submitted
  // at a steady rate meanwhile.
  Shared shared;
  const auto start = Clock::now();
  for (size_t i = 0; i < agents.size(); ++i) {
    agents[i].next_report = start + std::chrono::microseconds(1'000'000 * i / agents.size());
    agents[i].last_ok = start;
  }
  const auto until =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  Wire wire;  // the agents' reports and waits
  std::vector<Wakeup> wakeups(static_cast<size_t>(threads));
  std::atomic<bool> done{false};
  std::atomic<size_t> answered{0};  // agents a report of which was answered
  std::vector<std::thread> waiters;
  std::vector<Clients> wait_clients(o.long_poll ? agents.size() : 0);
  for (size_t i = 0; i < wait_clients.size(); ++i) {
    wait_clients[i] = ClientsOf(o, static_cast<uint32_t>(1000 + i));
    waiters.emplace_back([&, i] {
      Agent& a = agents[i];
      size_t server = 0;
      uint64_t seen = 0;
      while (!done) {
        seen = std::max(seen, a.orders.load());
        const auto asked = Clock::now();
        auto answer = Post(wait_clients[i], server, "/v1/agents/wait",
                           json{{"orders", seen}}.dump(), a.credential, gleaner::core::Seconds(35));
        if (done) break;
        if (!answer) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          continue;
        }
        const uint64_t orders = answer->value("orders", uint64_t{0});
        if (orders <= seen) {
          // As `gleaner agent`: nothing new yet answered at once, no busy loop.
          if (Clock::now() - asked < std::chrono::seconds(1)) {
            std::this_thread::sleep_for(std::chrono::seconds(1));
          }
          continue;
        }
        seen = orders;
        if (o.woken_report_own) {
          Tally tally;
          bool again = true;
          {
            std::lock_guard lock(a.mu);
            while (again && !done &&
                   ReportNow(a, wait_clients[i], o, shared, tally, answered, again)) {
            }
          }
          std::lock_guard lock(shared.mu);
          shared.report_latency.insert(shared.report_latency.end(), tally.latencies.begin(),
                                       tally.latencies.end());
          shared.reports_ok += tally.ok;
          shared.reports_failed += tally.failed;
          shared.report_bytes += tally.bytes;
          continue;
        }
        a.woken = true;
        Wakeup& w = wakeups[i % static_cast<size_t>(threads)];
        {
          std::lock_guard lock(w.mu);
          w.any = true;
        }
        w.cv.notify_one();
      }
    });
  }
  std::thread submitter([&] {
    Clients clients = ClientsOf(o, 999);
    size_t server = 0;
    const auto gap = std::chrono::duration<double>(1.0 / o.jobs_per_second);
    // After every agent's inventory is in and answered: what is measured
    // is a running cluster, not its first seconds.
    auto next = start + std::chrono::seconds(5);
    while (answered.load() < agents.size() && Clock::now() < until - std::chrono::seconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    next = std::max(next, Clock::now());
    while (next < until - std::chrono::seconds(10)) {
      std::this_thread::sleep_until(next);
      next += std::chrono::duration_cast<Clock::duration>(gap);
      auto job = Post(clients, server, "/v1/jobs", R"({"command": ["true"], "gpus": 1})", o.token);
      const auto acked = Clock::now();
      if (job && job->contains("id")) {
        std::lock_guard lock(shared.mu);
        shared.submitted[(*job)["id"].get<gleaner::sched::JobId>()] = acked;
      }
    }
  });
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Clients clients = ClientsOf(o, static_cast<uint32_t>(t));
      Wakeup& wakeup = wakeups[static_cast<size_t>(t)];
      Tally tally;
      std::vector<double> longest(agents.size(), 0);
      while (Clock::now() < until) {
        Clock::time_point soonest = until;
        for (size_t i = static_cast<size_t>(t); i < agents.size();
             i += static_cast<size_t>(threads)) {
          Agent& a = agents[i];
          const bool woken = a.woken.exchange(false);
          if (!woken && Clock::now() < a.next_report) {
            soonest = std::min(soonest, a.next_report);
            continue;
          }
          if (!woken) a.next_report += std::chrono::seconds(1);
          std::lock_guard lock(a.mu);
          bool again = false;
          const std::optional<double> gap =
              ReportNow(a, clients, o, shared, tally, answered, again);
          if (!gap) continue;
          longest[i] = std::max(longest[i], *gap);
          if (again) a.woken = true;
          soonest = std::min(soonest, a.woken ? Clock::now() : a.next_report);
        }
        std::unique_lock lock(wakeup.mu);
        wakeup.cv.wait_until(lock, std::min(soonest, until), [&] { return wakeup.any; });
        wakeup.any = false;
      }
      wire.Add(clients);
      std::lock_guard lock(shared.mu);
      shared.report_latency.insert(shared.report_latency.end(), tally.latencies.begin(),
                                   tally.latencies.end());
      for (size_t i = static_cast<size_t>(t); i < agents.size();
           i += static_cast<size_t>(threads)) {
        shared.outages.push_back(longest[i]);
      }
      shared.reports_ok += tally.ok;
      shared.reports_failed += tally.failed;
      shared.report_bytes += tally.bytes;
    });
  }
  for (std::thread& th : pool) th.join();
  submitter.join();
  const double ran = Since(start);
  done = true;
  for (Clients& c : wait_clients) {
    for (auto& client : c) client->Interrupt();
  }
  for (std::thread& th : waiters) th.join();
  for (const Clients& c : wait_clients) wire.Add(c);
  const json out = {
      {"agents", o.agents},
      {"gpus_per_agent", o.gpus},
      {"tls", o.servers.front().tls},
      {"keep_alive", o.keep_alive},
      {"long_poll", o.long_poll},
      {"woken_report_own", o.woken_report_own},
      {"http_bytes_per_agent_per_second", static_cast<double>(wire.bytes.load()) / o.agents / ran},
      {"connections_opened", wire.connections.load()},
      {"joined", joined.load()},
      {"joins_per_second", joined.load() / join_s},
      {"reports_per_second", static_cast<double>(shared.reports_ok) / ran},
      {"reports_failed", shared.reports_failed},
      {"report_body_bytes_mean",
       shared.reports_ok ? static_cast<double>(shared.report_bytes) /
                               static_cast<double>(shared.reports_ok + shared.reports_failed)
                         : 0},
      {"report_latency_ms_p50", 1e3 * Percentile(shared.report_latency, 0.5)},
      {"report_latency_ms_p99", 1e3 * Percentile(shared.report_latency, 0.99)},
      {"jobs_started", shared.submit_to_start.size()},
      {"jobs_not_started", shared.submitted.size()},
      {"submit_to_start_s_p50", Percentile(shared.submit_to_start, 0.5)},
      {"submit_to_start_s_p99", Percentile(shared.submit_to_start, 0.99)},
      {"longest_gap_without_answer_s_max", Percentile(shared.outages, 1.0)},
      {"longest_gap_without_answer_s_p50", Percentile(shared.outages, 0.5)}};
  std::cout << out.dump(2) << "\n";
  return 0;
}
