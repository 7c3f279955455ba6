// gleaner.toml, as every daemon command reads it (config::LoadConfig's parse):
// toml++ and then each section's keys, ranges and alert rules.

#include "config/config_file.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gleaner::config::ParseConfig(gleaner::fuzz::AsText(data, size), "gleaner.toml");
  return 0;
}
