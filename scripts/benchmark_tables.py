#!/usr/bin/env python3
"""Regenerates the simulator's tables in docs/benchmarks.md from this build.

Each generated table sits between two markers in the page:

    <!-- table NAME: scripts/benchmark_tables.py -->
    ...what the commands below print, rendered...
    <!-- end table NAME -->

and is a pure function of its commands' metrics.json (the simulator and
`bench frag` are deterministic), so a table can only say what the current
build does. With no options every table is re-run and written back; with
--check only the quick ones run (about two minutes on 2 cores) and the page
is compared, not written: a table that differs is printed with a diff and
the exit code is 1. The ctest `BenchmarkTablesAreCurrent` (label docs) runs
--check. A table with no marker is measured by hand and names its commit.

  scripts/benchmark_tables.py [--check] [--only NAME ...] [--gleaner PATH]
                              [--traces DIR] [--page FILE] [-j N] [--list]

Exit codes: 0 current (or written), 1 a table differs, 2 bad use or a
command failed, 77 the traces are not there ($GLEANER_TRACE_DIR, else
../shared/traces).
"""

import argparse
import concurrent.futures
import difflib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

HARVEST = ["sim", "harvest"]
GENAI = HARVEST + ["--genai", "{T}/alibaba-genai/pod_gpu_duty_cycle_anon.csv"]
GENAI_MEM = GENAI + ["--genai-memory", "{T}/alibaba-genai/pod_gpu_memory_used_bytes_anon.csv"]
HELIOS = HARVEST + ["--helios", "{T}/helios-earth"]
PHILLY = HARVEST + ["--philly", "{T}/philly/philly_node_sequence.csv"]


# ---------------------------------------------------------------- formatting

def thousands(n):
    return f"{n:,}"


def hours(h):
    """GPU-hours as the tables write them: a tenth below 100, whole above."""
    return f"{h:.1f}" if abs(h) < 100 else thousands(round(h))


def pct(share):
    return f"{100 * share:.1f} %"


def ratio(x, base):
    if base == 0:
        return "-"
    r = x / base
    return f"{r:.2f}" if r >= 0.1 else f"{r:.3f}"


def run_name(run):
    if run["policy"] == "none":
        return "none"
    return run["policy"] + (" ckpt" if run["checkpoints"] else ", none saved")


def find_run(metrics, policy, checkpoints=True):
    for run in metrics["runs"]:
        if run["policy"] == policy and run["checkpoints"] == checkpoints:
            return run
    raise KeyError(f"no {policy} run (checkpoints={checkpoints}) in the output")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def span(metrics):
    seconds = metrics["owner"]["end_s"] - metrics["owner"]["start_s"]
    return f"{seconds / 3600:.1f} h" if seconds < 3 * 86400 else f"{round(seconds / 86400)} d"


# ------------------------------------------------------------------- tables

def harvest_trace(title, args):
    """One owner trace under the default settings: its limit and every
    lending run of the one command."""
    def render(outputs, _traces):
        m = outputs[0]
        limit = m["physical_limit"]
        held = limit["held_idle_gpu_hours"]
        intro = (f"**{title}**: {thousands(m['owner']['gpus'])} GPUs, {span(m)}; physical limit "
                 f"{hours(limit['idle_gpu_hours'])} idle GPU-hours"
                 + (f" ({hours(held)} held by an owner's process)" if held > 0 else "")
                 + f"; queue {thousands(m['queue']['jobs'])} jobs.")
        rows = []
        for run in m["runs"]:
            if run["policy"] == "none":
                continue
            rows.append([run_name(run), hours(run["harvested_gpu_hours"]),
                         f"{hours(run['harvested_idle_gpu_hours'])} ({pct(run['harvested_share_of_idle'])})",
                         hours(run["useful_gpu_hours"]), hours(run["lost_gpu_hours"]),
                         thousands(run["owner_returns"]), hours(run["owner_delay_gpu_hours"]),
                         f"{thousands(run['jobs_finished'])} / {thousands(m['queue']['jobs'])}"])
        return intro + "\n\n" + table(
            ["run", "harvested GPU-h", "while owners idle (of idle)", "useful GPU-h", "lost GPU-h",
             "returns", "owner wait GPU-h", "jobs done"], rows)
    return [args], render


def held_idle():
    # (extra flags, the row's label, the runs it shows)
    variants = [
        ([], None, ("naive", "gleaner", "colocate", "park")),
        (["--min-expected-quiet-s", "0"], "`--min-expected-quiet-s 0`", ("colocate", "park")),
        (["--park-idle-s", "600"], "`--park-idle-s 600`", ("park",)),
        (["--colocate-margin", "0"], "`--colocate-margin 0`", ("colocate",)),
        (["--gpu-memory-gib", "48", "--colocate-margin", "0"], "48 GiB GPUs, margin 0", ("colocate",)),
        (["--gpu-memory-gib", "48", "--colocate-margin", "0", "--min-expected-quiet-s", "0"],
         "48 GiB GPUs, margin 0, `--min-expected-quiet-s 0`", ("colocate",)),
    ]
    commands = [GENAI_MEM + extra for extra, _, _ in variants]

    def row(run, label, jobs):
        parked = run["parks"] > 0 or run["policy"] == "park"
        lends_beside = run["policy"] in ("colocate", "park")
        if lends_beside:
            oom = str(run["holder_oom_risk_minutes"])
        else:  # naive takes the GPU from under its holder; gleaner lends none beside one
            oom = "(takes GPUs from holders)" if run["policy"] == "naive" else "-"
        return [label, f"{hours(run['harvested_idle_gpu_hours'])} ({pct(run['harvested_share_of_idle'])})",
                hours(run["shared_gpu_hours"]) if lends_beside else "-",
                hours(run["parked_gpu_hours"]) if lends_beside else "-",
                hours(run["useful_gpu_hours"]), hours(run["lost_gpu_hours"]),
                thousands(run["owner_returns"]), hours(run["owner_delay_gpu_hours"]),
                oom,
                f"{run['parks']} / {run['restores']} ({round(run['restore_wait_mean_s'])} s)"
                if parked else "-",
                f"{thousands(run['jobs_finished'])} / {thousands(jobs)}"]

    def render(outputs, _traces):
        rows = []
        jobs = outputs[0]["queue"]["jobs"]
        for (_, label, policies), m in zip(variants, outputs):
            for policy in policies:
                rows.append(row(find_run(m, policy), f"{policy}, {label}" if label else policy, jobs))
        return table(["run (checkpoints)", "while owners idle GPU-h (of idle)", "beside holders",
                      "on parked GPUs", "useful GPU-h", "lost GPU-h", "returns", "owner wait GPU-h",
                      "holder-OOM risk minutes", "parks / restores (mean wait)", "jobs done"], rows)
    return commands, render


def forecasts(args, settings):
    """The lending gate and runtime guesses on one trace; each row against
    naive lending's checkpointed run of its own command. `settings`: pairs
    of --min-expected-quiet-s and --runtimes, None for the default (the
    flag left out, so the default's row is the trace's plain command, run
    once for this table and its own). A row says what its run's
    metrics.json says it ran with."""
    commands = [args + ([] if q is None else ["--min-expected-quiet-s", str(q)]) +
                ([] if r is None else ["--runtimes", r]) for q, r in settings]
    with_runtimes = any(r is not None for _, r in settings)

    def render(outputs, _traces):
        rows = []
        for (q, r), m in zip(settings, outputs):
            naive, gleaner = find_run(m, "naive"), find_run(m, "gleaner")
            default = q is None and r is None
            quiet = f"{m['settings']['min_expected_quiet_s']:g}"
            cells = [f"{quiet} (default)" if default else quiet]
            if with_runtimes:
                cells.append(m["settings"]["runtimes"])
            cells += [pct(gleaner["harvested_share_of_idle"]),
                      f"{hours(gleaner['lost_gpu_hours'])} ({ratio(gleaner['lost_gpu_hours'], naive['lost_gpu_hours'])})",
                      f"{thousands(gleaner['owner_returns'])} ({ratio(gleaner['owner_returns'], naive['owner_returns'])})",
                      thousands(gleaner["jobs_finished"])]
            if default:
                cells = [f"**{c}**" for c in cells]
            rows.append(cells)
        naive = find_run(outputs[0], "naive")
        intro = (f"Naive lending: {pct(naive['harvested_share_of_idle'])} of "
                 f"{hours(outputs[0]['physical_limit']['idle_gpu_hours'])} idle GPU-hours, "
                 f"{hours(naive['lost_gpu_hours'])} GPU-hours lost, "
                 f"{thousands(naive['owner_returns'])} returns.")
        header = ["`min_expected_quiet_s`"] + (["runtimes"] if with_runtimes else []) + \
            ["harvested (of idle)", "lost GPU-h (vs naive)", "owner returns (vs naive)", "jobs done"]
        return intro + "\n\n" + table(header, rows)
    return commands, render


def gate_beside_holders(quiets):
    """The forecast gate's price on held-idle GPUs: co-location on GenAI
    with memory under each --min-expected-quiet-s (None: the default),
    with the useful work each return more than the default's buys (or
    each one fewer costs)."""
    commands = [GENAI_MEM + ([] if q is None else ["--min-expected-quiet-s", str(q)]) for q in quiets]

    def render(outputs, _traces):
        base = find_run(outputs[quiets.index(None)], "colocate")
        rows = []
        for q, m in zip(quiets, outputs):
            run = find_run(m, "colocate")
            quiet = f"{m['settings']['min_expected_quiet_s']:g}"
            more = run["owner_returns"] - base["owner_returns"]
            per_return = (f"{60 * (run['useful_gpu_hours'] - base['useful_gpu_hours']) / more:.1f}"
                          if more != 0 else "-")
            cells = [f"{quiet} (default)" if q is None else quiet,
                     f"{hours(run['harvested_idle_gpu_hours'])} ({pct(run['harvested_share_of_idle'])})",
                     hours(run["useful_gpu_hours"]), hours(run["lost_gpu_hours"]),
                     thousands(run["owner_returns"]), hours(run["owner_delay_gpu_hours"]),
                     str(run["holder_oom_risk_minutes"]), per_return]
            rows.append([f"**{c}**" for c in cells] if q is None else cells)
        return table(["`min_expected_quiet_s`", "while owners idle GPU-h (of idle)", "useful GPU-h",
                      "lost GPU-h", "returns", "owner wait GPU-h", "holder-OOM risk minutes",
                      "useful GPU-min per return, against the default"], rows)
    return commands, render


def replay_itp():
    clusters = [("01", 64), ("04", 624), ("05", 16), ("10", 16)]
    policies = ("fifo", "sjf", "gleaner")
    commands = [["sim", "replay", "--itp", f"{{T}}/itp/cluster{c}.csv", "--gpus", str(n), "--policy", p]
                for c, n in clusters for p in policies]

    def render(outputs, _traces):
        rows = []
        for m in outputs:
            rows.append([m["trace"].removesuffix(".csv"), m["gpus"], m["policy"], m["jobs"],
                         m["makespan_s"]] + seconds(m) +
                        [replay_utilization(m["utilization"]), m["multi_node_gangs_started"]])
        return table(["trace", "N", "policy", "jobs", "makespan", "JCT mean", "JCT median", "JCT p99",
                      "queue mean", "queue median", "queue p99", "utilization", "gangs"], rows)
    return commands, render


def replay_openb():
    sizes = (6216, 56)
    policies = ("fifo", "priority", "sjf", "gleaner")
    commands = [["sim", "replay", "--openb", "{T}/alibaba-openb/openb_pod_list_default.csv", "--gpus",
                 str(n), "--gpus-per-node", "8", "--policy", p] for n in sizes for p in policies]

    def render(outputs, _traces):
        rows = []
        for i, n in enumerate(sizes):
            runs = outputs[len(policies) * i:len(policies) * (i + 1)]
            cells = [[m["makespan_s"]] + seconds(m) +
                     [replay_utilization(m["utilization"]), m["peak_queued_jobs"]] for m in runs]
            if all(c == cells[0] for c in cells):  # nothing waits: the policies cannot differ
                rows.append([n, "every policy"] + cells[0])
            else:
                rows += [[n, m["policy"]] + c for m, c in zip(runs, cells)]
        return table(["N", "policy", "makespan", "JCT mean", "JCT median", "JCT p99", "queue mean",
                      "queue median", "queue p99", "utilization", "peak waiting"], rows)
    return commands, render


def seconds(m):
    return [f"{m[k]:.0f}" for k in ("mean_jct_s", "median_jct_s", "p99_jct_s", "mean_queue_s",
                                     "median_queue_s", "p99_queue_s")]


def replay_utilization(share):
    return f"{100 * share:.2f} %" if share < 0.01 else f"{100 * share:.1f} %"


FRAG_POLICIES = [("random", "Random", "01-Random"), ("bestfit", "BestFit", "05-BestFit"),
                 ("fgd", "FGD", "06-FGD"), ("gleaner", "gleaner", None)]


def frag_allocation():
    pods = "{T}/alibaba-openb/openb_pod_list_default.csv"
    nodes = "{T}/alibaba-openb/openb_node_list_gpu_node.csv"
    commands = [["bench", "frag", "--json", "--pods", pods, "--nodes", nodes, "--policy", p,
                 "--tune", "1.3", "--seed", str(s)] for p, _, _ in FRAG_POLICIES for s in range(42, 52)]

    def authors(traces):
        rows = {}
        path = os.path.join(traces, "alibaba-openb", "fgd_expected_allocation.csv")
        with open(path, encoding="utf-8") as f:
            header = f.readline().strip().split(",")
            for line in f:
                cells = dict(zip(header, line.strip().split(",")))
                if cells["workload"] == "openb_pod_list_default":
                    rows.setdefault(cells["sc_policy"], []).append(cells)
        return rows

    def render(outputs, traces):
        published = authors(traces)
        rows = []
        for i, (_, name, theirs) in enumerate(FRAG_POLICIES):
            ours = outputs[10 * i:10 * i + 10]
            cells = [name]
            for arrived in ("100", "130"):
                mine = statistics.fmean(o["allocation_pct"][arrived] for o in ours)
                if theirs:
                    cells.append(f"{statistics.fmean(float(r[arrived]) for r in published[theirs]):.2f}")
                else:
                    cells.append("-")
                cells.append(f"{mine:.2f}")
            rows.append(cells)
        return table(["policy", "authors 100 %", "ours 100 %", "authors 130 %", "ours 130 %"], rows)
    return commands, render


# name: (quick, (commands, render(outputs, traces))). The quick ones run in --check, in a
# minute or two on 2 cores, and cover the code every slow one runs: the
# harvest replay with and without memory (GenAI, Philly), the gate and
# holders' variants, the fragmentation score and the plain replays.
TABLES = {
    "harvest-genai-mem": (True, harvest_trace("GenAI, with memory", GENAI_MEM)),
    "harvest-genai": (False, harvest_trace("GenAI, utilization only", GENAI)),
    "harvest-helios": (False, harvest_trace("Helios, 8 VCs", HELIOS)),
    "harvest-vc3sl": (False, harvest_trace("Helios vc3sl", HARVEST + ["--helios", "{T}/helios-earth/vc3sl.csv"])),
    "harvest-helios-itp": (False, harvest_trace(
        "Helios, 8 VCs; ITP cluster05 as the queue", HELIOS + ["--queue-itp", "{T}/itp/cluster05.csv"])),
    "harvest-philly-0.5": (True, harvest_trace("Philly, `--load 0.5`", PHILLY + ["--load", "0.5"])),
    "harvest-philly-1": (False, harvest_trace("Philly, `--load 1` (the default)", PHILLY)),
    "harvest-philly-2": (False, harvest_trace("Philly, `--load 2`", PHILLY + ["--load", "2"])),
    "held-idle": (True, held_idle()),
    "gate-beside-holders": (True, gate_beside_holders([0, 60, 180, 300, 600, None, 1800])),
    "forecast-helios": (False, forecasts(HELIOS, [(0, "none"), (0, None), (None, None), (1200, None),
                                                  (1800, "none"), (1800, None), (1800, "declared"),
                                                  (3600, None)])),
    "forecast-genai": (True, forecasts(GENAI, [(0, None), (None, None)])),
    "forecast-philly": (False, forecasts(PHILLY, [(0, None), (None, None), (1200, None), (1800, None)])),
    "frag-default": (True, frag_allocation()),
    "replay-itp": (True, replay_itp()),
    "replay-openb": (True, replay_openb()),
}


# -------------------------------------------------------------------- runner

def run_commands(gleaner, traces, commands, workdir, jobs, cache):
    """Each command's output: its JSON on stdout (--json) or the
    metrics.json it writes under --out; `jobs` at a time, each command once
    per invocation (`cache`)."""
    def run(command):
        args = [a.replace("{T}", traces) for a in command]
        out = tempfile.mkdtemp(dir=workdir)
        to_stdout = "--json" in args
        done = subprocess.run([gleaner] + args + ([] if to_stdout else ["--out", out]),
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"gleaner {' '.join(args)}: exit {done.returncode}: "
                               f"{done.stderr.strip()}")
        if to_stdout:
            return json.loads(done.stdout)
        with open(os.path.join(out, "metrics.json"), encoding="utf-8") as f:
            return json.load(f)

    todo = list(dict.fromkeys(tuple(c) for c in commands if tuple(c) not in cache))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for command, output in zip(todo, pool.map(run, todo)):
            cache[command] = output
    return [cache[tuple(c)] for c in commands]


def render(name, gleaner, traces, jobs, cache):
    commands, renderer = TABLES[name][1]
    with tempfile.TemporaryDirectory(prefix="gleaner-tables.") as workdir:
        outputs = run_commands(gleaner, traces, commands, workdir, jobs, cache)
    return renderer(outputs, traces)


# One generated table: its opening marker, its name, what it says, its end.
BLOCK = re.compile(r"(<!-- table (\S+): scripts/benchmark_tables.py -->\n)(.*?)(<!-- end table \2 -->)",
                   re.S)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare the quick tables, write nothing")
    parser.add_argument("--only", nargs="+", default=[], help="these tables only")
    parser.add_argument("--gleaner", default=os.path.join(ROOT, "build", "gleaner"))
    parser.add_argument("--traces", default=os.environ.get("GLEANER_TRACE_DIR") or
                        os.path.join(ROOT, "..", "shared", "traces"))
    parser.add_argument("--page", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    parser.add_argument("--list", action="store_true", help="name every table and its commands")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="commands at once (default: one per CPU)")
    o = parser.parse_args()

    if o.list:
        print(f"T={o.traces}")
        for name, (quick, (commands, _)) in TABLES.items():
            print(f"{name}{' (quick)' if quick else ''}:")
            for c in commands:
                print("  gleaner " + " ".join(c) + ("" if "--json" in c else " --out DIR"))
        return 0
    unknown = [n for n in o.only if n not in TABLES]
    if unknown:
        print(f"benchmark_tables: no table {', '.join(unknown)}; --list names them", file=sys.stderr)
        return 2
    if not os.path.isdir(o.traces):
        print(f"benchmark_tables: no traces at {o.traces} (give --traces DIR)", file=sys.stderr)
        return 77
    if not os.access(o.gleaner, os.X_OK):
        print(f"benchmark_tables: no gleaner binary at {o.gleaner} (build it, or give --gleaner)",
              file=sys.stderr)
        return 2

    with open(o.page, encoding="utf-8") as f:
        page = f.read()
    in_page = {m.group(2) for m in BLOCK.finditer(page)}
    missing = [n for n in TABLES if n not in in_page]
    if missing:
        print(f"benchmark_tables: {o.page} has no marker for {', '.join(missing)}", file=sys.stderr)
        return 2
    chosen = o.only or [n for n, (quick, _) in TABLES.items() if quick or not o.check]

    # Written back one table at a time, so that a long run stopped half way
    # keeps what it finished.
    stale = []
    cache = {}
    for name in chosen:
        try:
            fresh = render(name, o.gleaner, o.traces, o.jobs, cache) + "\n"
        except (RuntimeError, KeyError, OSError, ValueError) as e:
            print(f"benchmark_tables: {name}: {e}", file=sys.stderr)
            return 2

        def replace(m, name=name, fresh=fresh):
            if m.group(2) != name or m.group(3) == fresh:
                return m.group(0)
            stale.append(name)
            sys.stdout.writelines(difflib.unified_diff(
                m.group(3).splitlines(True), fresh.splitlines(True),
                f"{o.page} ({name})", f"this build ({name})"))
            return m.group(1) + fresh + m.group(4)

        if not o.check:  # read again: the page may have been edited meanwhile
            with open(o.page, encoding="utf-8") as f:
                page = f.read()
        page = BLOCK.sub(replace, page)
        if not o.check and stale and stale[-1] == name:
            with open(o.page, "w", encoding="utf-8") as f:
                f.write(page)

    if o.check:
        if stale:
            print(f"benchmark_tables: {len(stale)} table(s) differ from this build: {', '.join(stale)}."
                  " Re-run scripts/benchmark_tables.py, read the diff, and say in the text what moved.",
                  file=sys.stderr)
            return 1
        print(f"benchmark_tables: {len(chosen)} table(s) current: {', '.join(chosen)}")
        return 0
    print(f"benchmark_tables: {len(stale)} of {len(chosen)} table(s) rewritten"
          + (f": {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
