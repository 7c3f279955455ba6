#include "config/toml_fields.h"

#include <optional>

#include "core/civil_time.h"

namespace gleaner::config {

using core::Status;

Status Error(const std::string& path, const toml::node& node, const std::string& key,
             const std::string& what) {
  return core::InvalidArgument(path + ":" + std::to_string(node.source().begin.line) + ": " + key +
                               ": " + what);
}

Status CheckKeys(const std::string& path, const toml::table& table, const std::string& prefix,
                 std::initializer_list<const char*> allowed) {
  for (const auto& [key, node] : table) {
    bool known = false;
    for (const char* a : allowed) known = known || key.str() == a;
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return Error(path, node, prefix + std::string(key.str()),
                   "unknown key; expected one of: " + list);
    }
  }
  return Status::Ok();
}

Status Number(const std::string& path, const toml::table& t, const std::string& prefix,
              const char* key, double min, double max, double* out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Status::Ok();
  std::optional<double> v = node->value<double>();
  if (!v || !(*v >= min && *v <= max)) {
    return Error(path, *node, prefix + key,
                 "expected a number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  *out = *v;
  return Status::Ok();
}

Status WholeNumber(const std::string& path, const toml::table& t, const std::string& prefix,
                   const char* key, int64_t min, int64_t max, int64_t* out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Status::Ok();
  std::optional<int64_t> v = node->is_integer() ? node->value<int64_t>() : std::nullopt;
  if (!v || *v < min || *v > max) {
    return Error(
        path, *node, prefix + key,
        "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  *out = *v;
  return Status::Ok();
}

Status Seconds(const std::string& path, const toml::table& t, const std::string& prefix,
               const char* key, double min_s, double max_s, core::Duration* out) {
  double s = core::ToSecondsDouble(*out);
  GLEANER_RETURN_IF_ERROR(Number(path, t, prefix, key, min_s, max_s, &s));
  *out = core::Duration(static_cast<int64_t>(s * 1e6));
  return Status::Ok();
}

Status Strings(const std::string& path, const toml::table& t, const std::string& prefix,
               const char* key, std::vector<std::string>* out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Status::Ok();
  const toml::array* array = node->as_array();
  if (array == nullptr) return Error(path, *node, prefix + key, "expected a list of strings");
  out->clear();
  for (const toml::node& item : *array) {
    std::optional<std::string> s = item.value<std::string>();
    if (!s) return Error(path, item, prefix + key, "expected a list of strings");
    out->push_back(*s);
  }
  return Status::Ok();
}

Status Text(const std::string& path, const toml::table& t, const std::string& prefix,
            const char* key, std::string* out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Status::Ok();
  std::optional<std::string> s = node->value<std::string>();
  if (!s) return Error(path, *node, prefix + key, "expected a string");
  *out = *s;
  return Status::Ok();
}

Status Flag(const std::string& path, const toml::table& t, const std::string& prefix,
            const char* key, bool* out) {
  const toml::node* node = t.get(key);
  if (node == nullptr) return Status::Ok();
  if (!node->is_boolean()) return Error(path, *node, prefix + key, "expected true or false");
  *out = *node->value<bool>();
  return Status::Ok();
}

core::Result<core::TimePoint> Instant(const std::string& path, const toml::node& node,
                                      const std::string& key) {
  const std::optional<toml::date_time> dt = node.value<toml::date_time>();
  if (!dt || !dt->offset) {
    return Error(path, node, key,
                 "expected a date and time with its offset, e.g. "
                 "2026-12-01T18:00:00Z");
  }
  const std::optional<int64_t> days =
      core::DaysFromCivil(dt->date.year, dt->date.month, dt->date.day);
  if (!days) return Error(path, node, key, "not a date in the calendar");
  const int64_t seconds = *days * 86400 + dt->time.hour * 3600 + dt->time.minute * 60 +
                          dt->time.second - int64_t{dt->offset->minutes} * 60;
  return core::FromUnixMicros(seconds * 1'000'000 + dt->time.nanosecond / 1000);
}

}  // namespace gleaner::config
