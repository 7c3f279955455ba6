#include "cost/csv_fields.h"

namespace gleaner::cost {

std::vector<std::string> SplitCsvLine(std::string_view line, std::string* problem) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool field_start = true;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"' && field_start) {
      quoted = true;
      field_start = false;
    } else if (c == ',') {
      fields.emplace_back();
      field_start = true;
    } else {
      fields.back() += c;
      field_start = false;
    }
  }
  if (quoted) *problem = "a quoted field is not closed";
  return fields;
}

}  // namespace gleaner::cost
