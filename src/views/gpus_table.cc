#include "views/gpus_table.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "core/civil_time.h"
#include "core/format.h"

namespace gleaner::views {
namespace {

std::string Printf(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

template <typename T>
std::string Missing(const gpu::Reading<T>& r) {
  switch (r.why()) {
    case gpu::Unreadable::kNotSupported:
      return "n/a";
    case gpu::Unreadable::kNoPermission:
      return "denied";
    case gpu::Unreadable::kGpuLost:
      return "lost";
    case gpu::Unreadable::kError:
      return "ERR";
  }
  return "ERR";
}

template <typename T, typename Format>
std::string Show(const gpu::Reading<T>& r, Format format) {
  return r.has_value() ? format(r.value()) : Missing(r);
}

std::string Utc(core::TimePoint t) { return core::FormatUtcSeconds(t) + " UTC"; }

std::string Memory(const gpu::GpuSnapshot& s) {
  if (!s.memory_used.has_value() || !s.memory_total.has_value()) return Missing(s.memory_used);
  return Printf("%.1f / %.1f GiB", s.memory_used.value().ToGiB(), s.memory_total.value().ToGiB());
}

std::string Power(const gpu::GpuSnapshot& s) {
  std::string draw = Show(s.power_draw_w, [](double w) { return Printf("%.0f", w); });
  std::string limit = Show(s.power_limit_w, [](double w) { return Printf("%.0f", w); });
  return draw + " / " + limit + " W";
}

std::string Header(const HostView& v) {
  std::string driver = Show(v.driver.driver_version, [](const std::string& s) { return s; });
  std::string cuda = Show(v.driver.cuda_driver_version,
                          [](int32_t c) { return Printf("%d.%d", c / 1000, (c % 1000) / 10); });
  // What an agent reported of itself: one line each.
  return Printf("%s  driver %s  CUDA %s  source %s  %s\n", core::OneLine(v.hostname).c_str(),
                core::OneLine(driver).c_str(), cuda.c_str(), core::OneLine(v.driver.source).c_str(),
                Utc(v.taken_at).c_str());
}

// "idle 12m" (state, and for how long), or "-" without a verdict.
std::string State(const GpuView& g, core::TimePoint now) {
  if (!g.verdict) return "-";
  std::string out(observe::GpuStateName(g.verdict->state));
  if (g.verdict->state != observe::GpuState::kUnknown) {
    out += " " + core::FormatDuration(now - g.verdict->since);
  }
  return out;
}

// "  [slurm job 1234]", "  [container 3f2a…]": where a process runs, when
// its cgroup (or Slurm's environment) says.
std::string Placement(const agent::ProcessInfo& p) {
  std::string out;
  const auto add = [&](const char* what, const std::string& id, size_t keep) {
    if (!id.empty()) out += Printf("  [%s %s]", what, core::OneLine(id.substr(0, keep)).c_str());
  };
  add("slurm job", p.slurm_job_id, 20);
  add("container", p.container_id, 12);
  add("pod", p.kubernetes_pod_uid, 36);
  if (p.slurm_job_id.empty() && p.container_id.empty() && p.kubernetes_pod_uid.empty()) {
    add("unit", p.systemd_unit, 40);
  }
  return out;
}

std::string ProcessRow(const ProcessView& pv) {
  const gpu::GpuProcess& p = pv.process;
  const char* type = p.compute && p.graphics ? "C+G" : p.graphics ? "G" : "C";
  std::string mem =
      Show(p.used_memory, [](core::Bytes b) { return Printf("%.1f GiB", b.ToGiB()); });
  // A process's command line is its user's to write: one line, escaped.
  std::string user = pv.owner ? core::OneLine(pv.owner->user) : "?";
  std::string command =
      pv.owner ? core::OneLine(pv.owner->command) : "(not visible from this PID namespace)";
  if (command.size() > 70) command = command.substr(0, 67) + "...";
  return Printf("      └ pid %-8u %-3s %-10s %10s  %s%s\n", p.pid, type, user.c_str(), mem.c_str(),
                command.c_str(), pv.owner ? Placement(*pv.owner).c_str() : "");
}

// "      ⚑ slurm job 1234 alice/physics gpu, 2 GPUs, started 3h ago".
std::string SlurmRow(const slurm::JobOnHost& holder, core::TimePoint now) {
  const slurm::SlurmJob& j = holder.job;
  std::string out = "      ⚑ slurm job " + j.DisplayId() + " " + (j.user.empty() ? "?" : j.user);
  if (!j.account.empty()) out += "/" + j.account;
  if (!j.partition.empty()) out += " " + j.partition;
  if (!j.qos.empty()) out += " qos " + j.qos;
  out += Printf(", %zu GPU%s here", holder.gpus.size(), holder.gpus.size() == 1 ? "" : "s");
  if (j.start_time) out += ", started " + core::FormatDuration(now - *j.start_time) + " ago";
  return core::OneLine(out) + "\n";  // Slurm's fields are its users' words
}

std::string TopologyMatrix(const HostView& v) {
  std::map<std::pair<std::string, std::string>, const gpu::GpuLink*> links;
  for (const gpu::GpuLink& l : v.topology) links[{l.a.str(), l.b.str()}] = &l;
  const auto cell = [&](const GpuView& a, const GpuView& b) -> std::string {
    if (&a == &b) return "X";
    auto it = links.find({a.snapshot.uuid.str(), b.snapshot.uuid.str()});
    if (it == links.end()) it = links.find({b.snapshot.uuid.str(), a.snapshot.uuid.str()});
    if (it == links.end()) return "-";
    const gpu::GpuLink& l = *it->second;
    if (l.nvlink.has_value() && l.nvlink.value()) return "NV";
    return Show(l.pcie, [](gpu::PcieLevel level) -> std::string {
      switch (level) {
        case gpu::PcieLevel::kSameBoard:
          return "BRD";
        case gpu::PcieLevel::kSinglePcieSwitch:
          return "PIX";
        case gpu::PcieLevel::kMultiplePcieSwitches:
          return "PXB";
        case gpu::PcieLevel::kHostBridge:
          return "PHB";
        case gpu::PcieLevel::kSameNumaNode:
          return "NODE";
        case gpu::PcieLevel::kCrossSocket:
          return "SYS";
      }
      return "?";
    });
  };
  std::string out =
      "\nTopology  NV=NVLink PIX=one PCIe switch PXB=several PHB=host bridge "
      "NODE=same NUMA node SYS=across sockets\n      ";
  for (const GpuView& g : v.gpus) out += Printf("%6s", Printf("GPU%u", g.snapshot.index).c_str());
  out += "\n";
  for (const GpuView& a : v.gpus) {
    out += Printf("%-6s", Printf("GPU%u", a.snapshot.index).c_str());
    for (const GpuView& b : v.gpus) out += Printf("%6s", cell(a, b).c_str());
    out += "\n";
  }
  return out;
}

}  // namespace

std::string GpusToTable(const HostView& v) {
  std::string out = Header(v);
  const char* row = "%-4s %-24s %-13s %-13s %5s %5s %-19s %5s %-13s %7s %-7s %s\n";
  out += Printf(row, "GPU", "NAME", "UUID", "BUS", "UTIL", "MEM%", "MEMORY", "TEMP", "POWER",
                "SM MHz", "HEALTH", "STATE");
  for (const GpuView& g : v.gpus) {
    const gpu::GpuSnapshot& s = g.snapshot;
    const auto pct = [](uint32_t p) { return Printf("%u%%", p); };
    std::string name = Show(s.name, [](const std::string& n) { return core::OneLine(n); });
    if (name.size() > 24) name = name.substr(0, 24);
    const std::string uuid = s.uuid.empty() ? "?" : s.uuid.str().substr(0, 12);
    const std::string health = s.health == gpu::GpuHealth::kOk
                                   ? "ok"
                                   : std::string(gpu::GpuHealthName(s.health)) + " (" +
                                         core::OneLine(s.health_detail) + ")";
    out += Printf(row, std::to_string(s.index).c_str(), name.c_str(), uuid.c_str(),
                  Show(s.pci_bus_id, [](const std::string& b) { return b; }).c_str(),
                  Show(s.utilization_gpu_pct, pct).c_str(),
                  Show(s.utilization_memory_pct, pct).c_str(), Memory(s).c_str(),
                  Show(s.temperature_c, [](int32_t c) { return Printf("%dC", c); }).c_str(),
                  Power(s).c_str(),
                  Show(s.sm_clock_mhz, [](uint32_t m) { return Printf("%u", m); }).c_str(),
                  health.c_str(), State(g, v.taken_at).c_str());
    if (g.verdict && !g.verdict->evidence.reason.empty()) {
      out += "      ↳ " + core::OneLine(g.verdict->evidence.reason) + "\n";
    }
    if (!s.processes.has_value()) {
      out += "      └ processes: " + Missing(s.processes) + "\n";
    }
    if (const slurm::JobOnHost* holder = slurm::HolderOf(v.slurm_jobs, s.index)) {
      out += SlurmRow(*holder, v.taken_at);
    }
    for (const ProcessView& p : g.processes) out += ProcessRow(p);
  }
  if (v.slurm && !v.slurm_error.empty()) {
    out += "slurm: " + v.slurm_error +
           (v.slurm_at ? " (jobs as of " + Utc(*v.slurm_at) + ")" : "") + "\n";
  }
  if (!v.topology.empty()) out += TopologyMatrix(v);
  // What an agent or a driver reported (names, Slurm's fields) may drive a
  // terminal too: nothing but line breaks goes through unescaped.
  return core::TerminalText(out);
}

}  // namespace gleaner::views
