#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace gleaner::core {

// The names of an enum's values in one table that both directions read: a
// value's name for output, the value of a name for input and the list of
// names for "expected one of ..." messages, so printing and parsing cannot
// drift apart. The table is checked when it is built (at compile time for a
// constexpr table): no value and no name twice, no empty name.
//
//   constexpr auto kColorNames = core::MakeEnumNames<Color>({
//       {Color::kRed, "red"},
//       {Color::kBlue, "blue"},
//   });
template <typename Enum, size_t N>
class EnumNames {
 public:
  using Row = std::pair<Enum, std::string_view>;

  // `unknown` is the name of a value the table lacks (one cast from a bad
  // integer).
  constexpr EnumNames(std::array<Row, N> rows, std::string_view unknown)
      : rows_(rows), unknown_(unknown) {
    for (size_t i = 0; i < N; ++i) {
      if (rows_[i].second.empty()) throw "EnumNames: an empty name";
      for (size_t j = 0; j < i; ++j) {
        if (rows_[i].first == rows_[j].first) throw "EnumNames: a value named twice";
        if (rows_[i].second == rows_[j].second) throw "EnumNames: a name given twice";
      }
    }
  }

  constexpr std::string_view Name(Enum value) const {
    for (const auto& [v, name] : rows_) {
      if (v == value) return name;
    }
    return unknown_;
  }

  constexpr std::optional<Enum> Parse(std::string_view name) const {
    for (const auto& [v, n] : rows_) {
      if (n == name) return v;
    }
    return std::nullopt;
  }

  // "a, b or c": the names in the table's order, for error messages.
  std::string List(std::string_view last_separator = " or ") const {
    std::string out;
    for (size_t i = 0; i < N; ++i) {
      if (i > 0) out += i + 1 == N ? last_separator : std::string_view(", ");
      out += rows_[i].second;
    }
    return out;
  }

  constexpr const std::array<Row, N>& rows() const { return rows_; }

 private:
  std::array<Row, N> rows_;
  std::string_view unknown_;
};

template <typename Enum, size_t N>
constexpr EnumNames<Enum, N> MakeEnumNames(const std::pair<Enum, std::string_view> (&rows)[N],
                                           std::string_view unknown = "?") {
  return EnumNames<Enum, N>(std::to_array(rows), unknown);
}

}  // namespace gleaner::core
