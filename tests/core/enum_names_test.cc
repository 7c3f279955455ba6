#include "core/enum_names.h"

#include <gtest/gtest.h>

namespace gleaner::core {
namespace {

enum class Fruit { kApple, kPear, kPlum };

constexpr auto kFruitNames = MakeEnumNames<Fruit>({
    {Fruit::kApple, "apple"},
    {Fruit::kPear, "pear"},
    {Fruit::kPlum, "plum"},
});

// Both directions are usable at compile time.
static_assert(kFruitNames.Name(Fruit::kPear) == "pear");
static_assert(kFruitNames.Parse("plum") == Fruit::kPlum);

TEST(EnumNamesTest, NamesAndParsesFromTheOneTable) {
  for (const auto& [fruit, name] : kFruitNames.rows()) {
    EXPECT_EQ(kFruitNames.Name(fruit), name);
    EXPECT_EQ(kFruitNames.Parse(name), fruit);
  }
  EXPECT_EQ(kFruitNames.Parse("Apple"), std::nullopt);  // names are exact
  EXPECT_EQ(kFruitNames.Parse(""), std::nullopt);
}

TEST(EnumNamesTest, AValueTheTableLacksHasTheUnknownName) {
  EXPECT_EQ(kFruitNames.Name(static_cast<Fruit>(7)), "?");
  constexpr auto kWithDefault = MakeEnumNames<Fruit>({{Fruit::kApple, "apple"}}, "other");
  EXPECT_EQ(kWithDefault.Name(Fruit::kPlum), "other");
}

TEST(EnumNamesTest, ListsTheNamesForMessages) {
  EXPECT_EQ(kFruitNames.List(), "apple, pear or plum");
  EXPECT_EQ(kFruitNames.List(", "), "apple, pear, plum");
  EXPECT_EQ(MakeEnumNames<Fruit>({{Fruit::kPear, "pear"}}).List(), "pear");
}

TEST(EnumNamesTest, ATableWithARepeatOrAnEmptyNameIsRefused) {
  // A constexpr table with these does not compile; built at run time, it throws.
  using Rows = std::array<EnumNames<Fruit, 2>::Row, 2>;
  EXPECT_ANY_THROW((EnumNames<Fruit, 2>(Rows{{{Fruit::kApple, "a"}, {Fruit::kApple, "b"}}}, "?")));
  EXPECT_ANY_THROW((EnumNames<Fruit, 2>(Rows{{{Fruit::kApple, "a"}, {Fruit::kPear, "a"}}}, "?")));
  EXPECT_ANY_THROW((EnumNames<Fruit, 2>(Rows{{{Fruit::kApple, "a"}, {Fruit::kPear, ""}}}, "?")));
}

}  // namespace
}  // namespace gleaner::core
