#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace gleaner::agent {

// Where root looks for the programs it runs on a job's behalf (podman,
// apptainer): root's own directories, never the job's PATH, which its user
// writes.
std::vector<std::string> RootProgramDirs();

// The first `name` in `dirs` that nobody but root could have put there or
// changed: a regular executable file that is root's, in directories that
// are root's up to /, none writable by others (a sticky one, like /tmp,
// excepted above the file's own). NotFound naming where it looked, or why
// a file found there was passed over.
core::Result<std::string> TrustedProgram(const std::string& name,
                                         const std::vector<std::string>& dirs);

}  // namespace gleaner::agent
