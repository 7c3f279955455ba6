#!/usr/bin/env python3
"""Checks that every module in src/ includes only what it links.

Each folder of src/ is one module, declared in its CMakeLists.txt by
gleaner_module(NAME ... DEPS gleaner::a gleaner::b ... PRIVATE_DEPS ...).
A file of module M may include "X/..." only where X is M or a module that
M depends on, directly or through others. Anything else compiles by
accident (src/ is one include path) and breaks the day a link list is
trimmed, or hides a dependency the architecture does not want.

  scripts/check_includes.py        exit 0 when all hold, 1 listing each break
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
# Includes without a link, each with why: only header-only types, where
# the link would be a cycle.
HEADER_ONLY = {
    ("config", "server"): "the plain types of the API's policies (projects, class rules, "
                          "sessions, limits, tokens), inline only: server links config",
}


def declared_deps():
    """Module name -> the gleaner modules its gleaner_module() names."""
    deps = {}
    for module in sorted(os.listdir(SRC)):
        cmake = os.path.join(SRC, module, "CMakeLists.txt")
        if not os.path.isfile(cmake):
            continue
        text = open(cmake, encoding="utf-8").read()
        call = re.search(r"gleaner_module\(\s*" + re.escape(module) + r"\b(.*?)\)\s*$", text,
                         re.S | re.M)
        if call is None:
            continue
        deps[module] = set(re.findall(r"gleaner::([a-z_]+)", call.group(1)))
    return deps


def closure(deps):
    """Module name -> every module it depends on, directly or not."""
    reach = {}
    for module in deps:
        seen, todo = set(), list(deps[module])
        while todo:
            d = todo.pop()
            if d not in seen:
                seen.add(d)
                todo.extend(deps.get(d, ()))
        reach[module] = seen
    return reach


def main():
    deps = declared_deps()
    reach = closure(deps)
    broken = 0
    for module in sorted(deps):
        for folder, _, files in os.walk(os.path.join(SRC, module)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(folder, name)
                for number, line in enumerate(open(path, encoding="utf-8"), 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) not in deps:
                        continue
                    used = m.group(1)
                    if used != module and used not in reach[module] and \
                            (module, used) not in HEADER_ONLY:
                        broken += 1
                        print(f"{os.path.relpath(path, ROOT)}:{number}: module {module} includes "
                              f"{used}/ but does not depend on it; add gleaner::{used} to DEPS in "
                              f"src/{module}/CMakeLists.txt, or move the code where it belongs")
    for (module, used), why in HEADER_ONLY.items():
        print(f"allowed: {module} includes {used}/ without linking it: {why}")
    print(f"{len(deps)} modules: {'every include matches a dependency' if not broken else f'{broken} includes without a dependency'}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
