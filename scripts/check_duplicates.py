#!/usr/bin/env python3
"""Finds the places in src/ that repeat one another, pairs of places that
share a run of RUN or more identical lines (blank lines, comments, includes
and lines of braces alone left out; blanks within a line ignored), and
fails on a pair that scripts/duplicates_known does not list: a change that
copies code is shown where, so that the code is shared instead. The list
only shrinks: when a change removes a pair the check fails until the list
is written again (--update), so the count cannot creep back up.

  scripts/check_duplicates.py            the check (ctest DuplicatesDoNotGrow)
  scripts/check_duplicates.py --list     every pair, with its lines
  scripts/check_duplicates.py --update   writes today's pairs as the known ones"""
import argparse
import collections
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = os.path.join(ROOT, "src")
KNOWN = os.path.join(ROOT, "scripts", "duplicates_known")
RUN = 6
# Lines that say nothing by themselves: they join runs but never make one.
SKIP = re.compile(r"^(//.*|#\s*include\b.*|#\s*pragma once|[{}()\[\];,]*|namespace .*|}\s*//.*)$")


def code_lines(path):
    """(line number, normalised text) of each line that counts."""
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = " ".join(line.split())
            if text and not SKIP.match(text):
                out.append((number, text))
    return out


def find_pairs():
    files = {}
    for top, _, names in os.walk(SRC):
        for name in sorted(names):
            if name.endswith((".cc", ".h")):
                path = os.path.join(top, name)
                files[os.path.relpath(path, ROOT)] = code_lines(path)
    # Every window of RUN counted lines, by its text.
    windows = collections.defaultdict(list)
    for rel, lines in files.items():
        for i in range(len(lines) - RUN + 1):
            windows[tuple(t for _, t in lines[i:i + RUN])].append((rel, i))
    # Windows shared by two places; consecutive windows of the same two
    # places are one run, so a long copy counts once.
    shared = collections.defaultdict(set)
    for places in windows.values():
        if len(places) < 2:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, ia), (fb, ib) = sorted((places[a], places[b]))
                if fa == fb and abs(ia - ib) < RUN:
                    continue  # a run that overlaps itself (repeated lines)
                shared[(fa, fb, ib - ia if fa == fb else None)].add((ia, ib))
    pairs = []
    for (fa, fb, _), starts in shared.items():
        starts = sorted(starts)
        run_start = prev = starts[0]
        for s in starts[1:] + [None]:
            if s is not None and s[0] == prev[0] + 1 and s[1] == prev[1] + 1:
                prev = s
                continue
            la, lb = files[fa], files[fb]
            pairs.append((f"{fa}:{la[run_start[0]][0]}-{la[prev[0] + RUN - 1][0]}",
                          f"{fb}:{lb[run_start[1]][0]}-{lb[prev[1] + RUN - 1][0]}"))
            if s is not None:
                run_start = prev = s
    return sorted(pairs)


def file_pair(pair):
    a, b = pair
    return f"{a.split(':')[0]} ~ {b.split(':')[0]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every pair")
    parser.add_argument("--update", action="store_true", help="write today's pairs as the known ones")
    args = parser.parse_args()
    pairs = find_pairs()
    if args.list:
        for a, b in pairs:
            print(f"{a} ~ {b}")
        return 0
    if args.update:
        with open(KNOWN, "w", encoding="utf-8") as f:
            f.write("".join(f"{file_pair(p)}\n" for p in pairs))
        print(f"{len(pairs)} pair(s) written to {os.path.relpath(KNOWN, ROOT)}")
        return 0
    with open(KNOWN, encoding="utf-8") as f:
        known = collections.Counter(line.strip() for line in f if line.strip())
    now = collections.Counter(file_pair(p) for p in pairs)
    added = now - known
    gone = known - now
    if added:
        print(f"The change repeats code: {sum(added.values())} new pair(s) of places in src/ "
              f"share {RUN} or more identical lines. Share the code instead:")
        for p in pairs:
            if file_pair(p) in added:
                print(f"  {p[0]} ~ {p[1]}")
        return 1
    if gone:
        print("Fewer repeats than scripts/duplicates_known lists: "
              + "; ".join(gone) + ". Record it: scripts/check_duplicates.py --update")
        return 1
    print(f"{len(pairs)} known pair(s) of places in src/ share {RUN} or more identical lines; "
          "no new one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
