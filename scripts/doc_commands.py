#!/usr/bin/env python3
"""Runs the shell blocks of README.md and docs/*.md as they are written.

The line before every ```sh block says what becomes of it:

    <!-- sh: runs -->                 run as root and as a throwaway user
    <!-- sh: runs as root -->         run as root only (an admin's command)
    <!-- sh: illustration: WHY -->    not run, and why (a synopsis with
                                      placeholders, another host, a real
                                      GPU, PostgreSQL, hours of traces)

A block that runs gets a fresh directory of its own as its working
directory, laid out as a checkout after the quick start: build/gleaner is
the binary under test, `gleaner` is on PATH, and `gleaner up --fake demo`,
started by the one who runs this script (root in CI, as an admin starts
it), serves .gleaner there, which $GLEANER_DATA_DIR names, so a bare
`gleaner` reaches it as a `gleaner` on a server reaches /var/lib/gleaner.
The block runs under `bash -e -o pipefail`; any failing command fails it.
Paths under /tmp that a block names are its scratch: removed before and
after it runs. What it leaves running is killed, and so are the jobs its
daemons started.

  scripts/doc_commands.py --check                    every block is marked
  scripts/doc_commands.py --run --gleaner BINARY     and the runnable ones run

Exit codes: 0 all marked (and run), 1 a block is unmarked or failed, 2 bad
use. Not as root, blocks run as the caller only and `runs as root` ones
are skipped, said so.
"""

import argparse
import glob
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK = re.compile(r"<!-- sh: (runs as root|runs|illustration: \S.*) -->$")
BLOCK_TIMEOUT_S = 120
USER = "gleaner-docs"


class Block:
    def __init__(self, page, line, mark, text):
        self.page, self.line, self.mark, self.text = page, line, mark, text

    def where(self):
        return f"{os.path.relpath(self.page, ROOT)}:{self.line}"


def pages():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def blocks_of(page):
    """Every ```sh block of a page with the mark on the line before it
    (None when there is none)."""
    lines = open(page, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            m = MARK.match(lines[i - 1].strip()) if i > 0 else None
            found.append(Block(page, i + 1, m.group(1) if m else None, "\n".join(lines[i + 1:end])))
            i = end
        i += 1
    return found


def unmarked(blocks):
    bad = [b for b in blocks if b.mark is None]
    for b in bad:
        print(f"{b.where()}: a ```sh block with no mark on the line before it; add "
              "<!-- sh: runs -->, <!-- sh: runs as root --> or <!-- sh: illustration: WHY -->",
              file=sys.stderr)
    return bad


def make_user():
    subprocess.run(["userdel", USER], stderr=subprocess.DEVNULL)  # a killed run's
    subprocess.run(["groupdel", USER], stderr=subprocess.DEVNULL)
    # Tests that run beside this one add users too, and useradd gives up at
    # once on a locked /etc/passwd: try again for a while.
    for _ in range(50):
        made = subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "--user-group", USER],
                              stderr=subprocess.PIPE, text=True)
        if made.returncode == 0 or "lock" not in made.stderr:
            break
        time.sleep(0.2)
    if made.returncode != 0:
        raise SystemExit(f"useradd {USER} failed (exit code {made.returncode}): {made.stderr.strip()}")
    return pwd.getpwnam(USER)


def scratch_paths(text):
    # Names only: "/tmp/.." must never become a path to remove.
    names = set(re.findall(r"/tmp/([A-Za-z0-9._-]+)", text))
    return sorted("/tmp/" + n for n in names if n.strip("."))


def wait_for_demo(gleaner, data, deadline_s=30):
    end = time.time() + deadline_s
    while time.time() < end:
        if subprocess.run([gleaner, "--data-dir", data, "queue"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            return True
        time.sleep(0.2)
    return False


def kill_jobs_writing_under(prefixes):
    """Kills the jobs the block's daemons started: they outlive a daemon
    that stops (as they should), and write their output to logs under the
    block's directory or its scratch."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        for fd in ("1", "2"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if any(target.startswith(p + "/") for p in prefixes):
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
                break


def traversable_by_all(path):
    """Whether every directory from / down to path lets others through."""
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


def scratch_base():
    """Where the blocks' directories go: $TMPDIR when the throwaway user
    can reach it (a TMPDIR under root's 700 home is not), else /tmp."""
    base = tempfile.gettempdir()
    return base if traversable_by_all(base) else "/tmp"


def run_block(block, binary, user):
    """Runs one block in a fresh directory on a fresh demo; returns
    (ok, what it printed)."""
    who = user.pw_name if user else pwd.getpwuid(os.getuid()).pw_name
    work = tempfile.mkdtemp(prefix="gleaner-docs-", dir=scratch_base())
    os.chmod(work, 0o755)
    home = os.path.join(work, "home")
    os.makedirs(os.path.join(work, "build"))
    os.makedirs(os.path.join(work, "bin"))
    os.makedirs(home, mode=0o700)
    gleaner = os.path.join(work, "build", "gleaner")
    shutil.copy(binary, gleaner)
    os.chmod(gleaner, 0o755)
    os.symlink("../build/gleaner", os.path.join(work, "bin", "gleaner"))
    if user:
        os.chown(home, user.pw_uid, user.pw_gid)
    data = os.path.join(work, ".gleaner")
    scratch = scratch_paths(block.text)
    for p in scratch:
        shutil.rmtree(p, ignore_errors=True)
    demo = subprocess.Popen([gleaner, "up", "--fake", "demo", "--listen", "none", "--data-dir", data],
                            stdout=open(os.path.join(work, "up.log"), "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    output, ok = "", False
    try:
        if not wait_for_demo(gleaner, data):
            return False, "the demo did not serve .gleaner in 30 s:\n" + open(os.path.join(work, "up.log")).read()
        env = {"PATH": os.path.join(work, "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "HOME": home, "USER": who, "LOGNAME": who, "LANG": "C.UTF-8", "GLEANER_DATA_DIR": data}
        ids = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
        shell = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=work, env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True, **ids)
        try:
            output, _ = shell.communicate(timeout=BLOCK_TIMEOUT_S)
            ok = shell.returncode == 0
            if not ok:
                output += f"\n(exit code {shell.returncode})"
        except subprocess.TimeoutExpired:
            output = f"(still running after {BLOCK_TIMEOUT_S} s)"
        finally:
            try:
                os.killpg(shell.pid, signal.SIGKILL)  # what the block left running
            except ProcessLookupError:
                pass
            shell.wait()
    finally:
        os.killpg(demo.pid, signal.SIGTERM)
        try:
            demo.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
        kill_jobs_writing_under([work] + scratch)
        for p in scratch:
            shutil.rmtree(p, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return ok, output


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that every block is marked")
    ap.add_argument("--run", action="store_true", help="run the blocks marked runs")
    ap.add_argument("--gleaner", help="the binary under test (for --run)")
    args = ap.parse_args()
    if args.check == args.run or (args.run and not args.gleaner):
        ap.print_usage(sys.stderr)
        print("give --check, or --run --gleaner BINARY", file=sys.stderr)
        return 2
    blocks = [b for p in pages() for b in blocks_of(p)]
    if unmarked(blocks):
        return 1
    runnable = [b for b in blocks if b.mark.startswith("runs")]
    print(f"{len(blocks)} shell blocks: {len(runnable)} run, {len(blocks) - len(runnable)} illustrations")
    if args.check:
        return 0
    binary = os.path.abspath(args.gleaner)
    root = os.geteuid() == 0
    user = make_user() if root else None
    failed = 0
    try:
        for b in runnable:
            as_whom = [None] + ([user] if root and b.mark == "runs" else [])
            if not root and b.mark == "runs as root":
                print(f"skip {b.where()}: runs as root, and this is not root")
                continue
            for who in as_whom:
                name = who.pw_name if who else pwd.getpwuid(os.getuid()).pw_name
                started = time.time()
                ok, output = run_block(b, binary, who)
                print(f"{'ok  ' if ok else 'FAIL'} {b.where()} as {name} ({time.time() - started:.1f} s)")
                if not ok:
                    failed += 1
                    print(b.text + "\n--- printed:\n" + output.rstrip() + "\n---")
    finally:
        if user:
            subprocess.run(["userdel", USER])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
