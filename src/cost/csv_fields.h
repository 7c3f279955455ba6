#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gleaner::cost {

// The fields of one CSV line in RFC 4180's quoting: a field in double quotes
// may hold commas, and "" inside it stands for one quote. Spaces around an
// unquoted field are kept. Sets *problem (and returns what was read) when a
// quoted field is not closed.
std::vector<std::string> SplitCsvLine(std::string_view line, std::string* problem);

}  // namespace gleaner::cost
