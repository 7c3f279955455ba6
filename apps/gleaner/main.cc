// Wiring only: the real clock and /proc, handed to the command line.
#include "agent/process_info.h"
#include "cli/main_cli.h"
#include "core/clock.h"

int main(int argc, char** argv) {
  const gleaner::core::RealClock clock;
  const gleaner::agent::ProcfsInspector inspector;
  return gleaner::cli::Main(argc, argv, clock, inspector);
}
