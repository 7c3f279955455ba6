#include "gpu/json_lines.h"

#include <gtest/gtest.h>

namespace gleaner::gpu {
namespace {

TEST(JsonLineIndexTest, FindsTheLineOfEveryValue) {
  const char* text = R"({
  "a": 1,
  "list": [
    {"x": "s,}]"},
    {
      "y": [true,
            null]
    }
  ],
  "esc\"aped": 2
})";
  JsonLineIndex index(text);
  EXPECT_EQ(index.LineOf(""), 1);
  EXPECT_EQ(index.LineOf("/a"), 2);
  EXPECT_EQ(index.LineOf("/list"), 3);
  EXPECT_EQ(index.LineOf("/list/0/x"), 4);
  EXPECT_EQ(index.LineOf("/list/1"), 5);
  EXPECT_EQ(index.LineOf("/list/1/y/1"), 7);
  EXPECT_EQ(index.LineOf("/esc\"aped"), 10);
}

TEST(JsonLineIndexTest, MissingKeysFallBackToTheNearestAncestor) {
  JsonLineIndex index("{\n\"gpus\": [\n{\n\"name\": 1}]}");
  EXPECT_EQ(index.LineOf("/gpus/0/uuid"), 3);
  EXPECT_EQ(index.LineOf("/nothing/here"), 1);
}

}  // namespace
}  // namespace gleaner::gpu
