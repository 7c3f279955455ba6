#pragma once

// What a child does between fork and exec, for every process gleaner starts
// as another user: a job (Executor), podman's pause process beside it, and
// a program run for a job (RunProgram: sbatch as the job's user). One rule
// each for the user switch, the descriptors a child keeps, and where its
// program is found. Between fork and exec a threaded daemon's child may
// only make async-signal-safe calls: everything here that runs in the
// child is.

#include <string>
#include <vector>

#include "agent/account.h"

namespace gleaner::agent {

// Where the child looks for `program`: itself when it names a path, else
// each PATH entry in order (an empty entry is "."), as execvp would. Built
// before the fork; which one runs is found by the child, as the user, so
// root's view of the file system never decides.
std::vector<std::string> ExecCandidates(const std::string& program, const std::string& path);

// Switches the calling process to `account` for good (its groups, gid and
// uid) and checks that root cannot be taken back; false (errno set) where
// either fails. Async-signal-safe.
bool BecomeUser(const Account& account);

// Closes every descriptor above stderr but `keep` (-1: none): nothing of
// the daemon's (the database, sockets, the driver) reaches the child.
// close_range where the kernel has it, one at a time where not.
// Async-signal-safe.
void CloseDescriptorsBut(int keep);

// Whether one of `candidates` is there for the caller to run, as execvp
// would look; else `*error` says why not (a file found but not executable
// over one that is missing). Async-signal-safe.
bool AnyRunnable(const std::vector<const char*>& candidates, int* error);

// Executes the first of `candidates` that runs, as execvp; returns only
// when none does, with the errno to report (a file found but not
// executable over one that is missing). Async-signal-safe.
int ExecFirst(const std::vector<const char*>& candidates, char* const* argv, char* const* envp);

}  // namespace gleaner::agent
