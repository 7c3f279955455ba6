#!/usr/bin/env python3
"""Runs a short clang-tidy profile, checks for real bugs with no false alarms
in this tree (a value used after it was moved, a handle left dangling, a
self-assignment that frees what it copies, a copy where a reference does),
as errors.

clang-tidy parses each file it checks, several seconds a file, too long for
every file on every run on two cores. So the tree's state is recorded: the
whole tree was clean at the commit in scripts/tidy_clean_at, and each run
checks the .cc files changed since then (a changed header: the .cc of the
same name), committed or not.

  scripts/check_tidy.py --build build            files changed since the clean commit
  scripts/check_tidy.py --build build --all      every file
  scripts/check_tidy.py --build build --all --record
                                                 every file, then HEAD recorded as clean"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CLEAN_AT = os.path.join(ROOT, "scripts", "tidy_clean_at")
CHECKS = ",".join([
    "-*",
    "bugprone-use-after-move",
    "bugprone-dangling-handle",
    "bugprone-undelegated-constructor",
    "bugprone-move-forwarding-reference",
    "bugprone-forwarding-reference-overload",
    "bugprone-copy-constructor-init",
    "bugprone-unhandled-self-assignment",
    "bugprone-parent-virtual-call",
    "bugprone-infinite-loop",
    "bugprone-unused-return-value",
    "bugprone-fold-init-type",
    "bugprone-inaccurate-erase",
    "bugprone-sizeof-expression",
    "bugprone-suspicious-memset-usage",
    "bugprone-suspicious-missing-comma",
    "bugprone-suspicious-string-compare",
    "bugprone-string-constructor",
    "bugprone-string-literal-with-embedded-nul",
    "performance-unnecessary-copy-initialization",
    "performance-for-range-copy",
    "performance-move-const-arg",
    "misc-redundant-expression",
    "misc-unused-using-decls",
])


def git(*args):
    run = subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    return run.stdout.split("\n") if run.returncode == 0 else None


def all_sources():
    out = []
    for top, _, names in os.walk(os.path.join(ROOT, "src")):
        out += [os.path.relpath(os.path.join(top, n), ROOT) for n in names if n.endswith(".cc")]
    return sorted(out)


def changed_sources():
    """The .cc files changed since the clean commit, or None: check all."""
    try:
        with open(CLEAN_AT, encoding="utf-8") as f:
            clean = f.read().strip()
    except FileNotFoundError:
        return None
    changed = git("diff", "--name-only", clean, "--", "src")
    untracked = git("ls-files", "--others", "--exclude-standard", "--", "src")
    if changed is None or untracked is None:
        print(f"commit {clean} of scripts/tidy_clean_at is not in this clone: checking every file")
        return None
    out = set()
    for path in changed + untracked:
        cc = path[:-2] + ".cc" if path.endswith(".h") else path
        if cc.endswith(".cc") and os.path.exists(os.path.join(ROOT, cc)):
            out.add(cc)
    return sorted(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="build directory (compile_commands.json)")
    parser.add_argument("--all", action="store_true", help="every file, not only changed ones")
    parser.add_argument("--record", action="store_true", help="with --all: record HEAD as clean")
    parser.add_argument("-j", type=int, default=2, help="files checked at once")
    args = parser.parse_args()
    tidy = shutil.which("clang-tidy")
    if tidy is None:
        print("clang-tidy is not installed: apt install clang-tidy", file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(args.build, "compile_commands.json")):
        print(f"no compile_commands.json in {args.build}: configure with cmake first",
              file=sys.stderr)
        return 1
    files = None if args.all else changed_sources()
    if files is None:
        files = all_sources()
    if not files:
        print("no source changed since the tree was last checked clean")
        return 0

    def check(rel):
        run = subprocess.run(
            [tidy, "-p", args.build, "--quiet", f"--checks={CHECKS}", "--warnings-as-errors=*",
             os.path.join(ROOT, rel)], capture_output=True, text=True)
        return rel, run.returncode, run.stdout

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
        for rel, rc, out in pool.map(check, files):
            if rc != 0:
                failed += 1
                print(f"{rel}:\n{out}")
    if failed:
        print(f"{failed} of {len(files)} file(s) break the clang-tidy profile (scripts/check_tidy.py)")
        return 1
    print(f"{len(files)} file(s) pass the clang-tidy profile")
    if args.record and args.all:
        head = git("rev-parse", "HEAD")
        with open(CLEAN_AT, "w", encoding="utf-8") as f:
            f.write(f"{head[0]}\n")
        print(f"recorded {head[0]} as clean in scripts/tidy_clean_at")
    return 0


if __name__ == "__main__":
    sys.exit(main())
