#!/usr/bin/env python3
"""Compiles, with clang's thread-safety analysis as errors, every source
file that sees core/mutex.h (directly or through the headers it includes):
fields marked GLEANER_GUARDED_BY and functions marked GLEANER_REQUIRES are
then touched only under their lock. Only clang has the analysis; the build
itself may use any compiler. Syntax only: a few seconds a file."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ANNOTATED = "core/mutex.h"


def sources():
    for top, _, files in os.walk(SRC):
        for f in files:
            if f.endswith((".cc", ".h")):
                path = os.path.join(top, f)
                yield os.path.relpath(path, SRC), path


def main():
    clang = shutil.which("clang++")
    if clang is None:
        print("clang++ is not installed: apt install clang", file=sys.stderr)
        return 1
    includes = {}
    for rel, path in sources():
        with open(path, encoding="utf-8") as f:
            includes[rel] = INCLUDE.findall(f.read())
    # Headers that bring in the annotations, to a fixed point.
    sees = {ANNOTATED}
    grew = True
    while grew:
        grew = False
        for rel, inc in includes.items():
            if rel not in sees and any(i in sees for i in inc):
                sees.add(rel)
                grew = True
    checked = sorted(rel for rel in sees if rel.endswith(".cc"))
    if not checked:
        print(f"no source includes {ANNOTATED}: nothing is checked", file=sys.stderr)
        return 1

    def compile_one(rel):
        run = subprocess.run(
            [clang, "-std=c++20", "-I", SRC, "-fsyntax-only", "-Wthread-safety",
             "-Wthread-safety-beta", "-Werror=thread-safety", "-Werror=thread-safety-beta",
             os.path.join(SRC, rel)],
            capture_output=True, text=True)
        return rel, run.returncode, run.stderr

    failed = 0
    jobs = max(1, min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for rel, rc, err in pool.map(compile_one, checked):
            if rc != 0:
                failed += 1
                print(f"src/{rel}:\n{err}")
    if failed:
        print(f"{failed} of {len(checked)} file(s) break the locking rules their fields declare")
        return 1
    print(f"{len(checked)} file(s) keep the locking rules their fields declare")
    return 0


if __name__ == "__main__":
    sys.exit(main())
