// The dashboard's files as the binary carries them: both languages hold
// the same strings with the same placeholders, every string the page asks
// for exists and every string is used, every file the page loads is
// there with a content type a browser will accept, and uPlot is the
// version ui/package-lock.json pins.
#include "ui/embedded_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace gleaner::ui {
namespace {

using nlohmann::json;

std::string Body(std::string_view path) {
  const EmbeddedFile* f = FindEmbeddedFile(path);
  return f == nullptr ? std::string() : std::string(f->body);
}

json Strings() { return json::parse(Body("/ui/strings.json")); }

// Every match of `pattern`'s first group in `text`.
std::set<std::string> Matches(const std::string& text, const std::string& pattern) {
  std::set<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

std::set<std::string> Placeholders(const std::string& text) {
  return Matches(text, R"(\{(\w+)\})");
}

std::set<std::string> KeysOf(const json& language) {
  std::set<std::string> keys;
  for (const auto& [key, value] : language.items()) keys.insert(key);
  return keys;
}

std::vector<const EmbeddedFile*> Scripts() {
  std::vector<const EmbeddedFile*> out;
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path.starts_with("/ui/js/")) out.push_back(&f);
  }
  return out;
}

TEST(EmbeddedFilesTest, BothLanguagesHoldTheSameStringsAndPlaceholders) {
  const json strings = Strings();
  ASSERT_EQ(KeysOf(strings), (std::set<std::string>{"en", "zh-CN"}));
  const std::set<std::string> en = KeysOf(strings["en"]);
  const std::set<std::string> zh = KeysOf(strings["zh-CN"]);
  for (const std::string& key : en) EXPECT_TRUE(zh.count(key)) << key << " has no zh-CN string";
  for (const std::string& key : zh) EXPECT_TRUE(en.count(key)) << key << " has no en string";
  EXPECT_GT(en.size(), 100u);
  for (const std::string& key : en) {
    if (!zh.count(key)) continue;
    const json& e = strings["en"][key];
    const json& z = strings["zh-CN"][key];
    ASSERT_TRUE(e.is_string() && z.is_string()) << key;
    EXPECT_FALSE(e.get<std::string>().empty()) << key;
    EXPECT_FALSE(z.get<std::string>().empty()) << key;
    EXPECT_EQ(Placeholders(e), Placeholders(z)) << key << ": \"" << e << "\" vs \"" << z << "\"";
  }
}

TEST(EmbeddedFilesTest, EveryStringThePageAsksForExistsAndEveryStringIsUsed) {
  const json en = Strings()["en"];
  const std::set<std::string> keys = KeysOf(en);
  std::set<std::string> namespaces;
  for (const std::string& key : keys) namespaces.insert(key.substr(0, key.find('.')));

  const std::string html = Body("/ui/index.html");
  std::set<std::string> used = Matches(html, R"re(data-i18n="([^"]+)")re");
  for (const std::string& pairs : Matches(html, R"re(data-i18n-attr="([^"]+)")re")) {
    for (const std::string& key : Matches(pairs, R"(:([a-z0-9_.]+))")) used.insert(key);
  }
  // Scripts name keys in full ('jobs.title'), never pieced together
  // (js/i18n.js), so a quoted string in a strings namespace is a key.
  for (const EmbeddedFile* f : Scripts()) {
    for (const std::string& literal :
         Matches(std::string(f->body), R"re(['"]([a-z_]+(?:\.[a-z0-9_]+)+)['"])re")) {
      if (namespaces.count(literal.substr(0, literal.find('.')))) used.insert(literal);
    }
  }
  for (const std::string& key : used) EXPECT_TRUE(keys.count(key)) << "no string " << key;
  for (const std::string& key : keys) EXPECT_TRUE(used.count(key)) << key << " is never used";
  EXPECT_TRUE(used.count("jobs.title"));
  EXPECT_TRUE(used.count("verdict.held_idle"));
}

TEST(EmbeddedFilesTest, EveryFileThePageLoadsIsThereWithItsType) {
  const std::string html = Body("/ui/index.html");
  ASSERT_FALSE(html.empty());
  std::set<std::string> wanted = Matches(html, R"re((?:src|href)="(/ui/[^"]+)")re");
  EXPECT_TRUE(wanted.count("/ui/js/main.js"));
  EXPECT_TRUE(wanted.count("/ui/vendor/uPlot.iife.min.js"));
  EXPECT_TRUE(wanted.count("/ui/vendor/uPlot.min.css"));
  for (const EmbeddedFile* f : Scripts()) {
    for (const std::string& module :
         Matches(std::string(f->body), R"re(from '\./([a-z_]+\.js)')re")) {
      wanted.insert("/ui/js/" + module);
    }
  }
  EXPECT_GE(wanted.size(), 15u);
  for (const std::string& path : wanted) {
    EXPECT_NE(FindEmbeddedFile(path), nullptr) << path << " is loaded but not embedded";
  }
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    EXPECT_NE(ContentTypeOf(f.path), "application/octet-stream") << f.path;
    EXPECT_FALSE(f.body.empty()) << f.path;
  }
  EXPECT_EQ(ContentTypeOf("/ui/js/main.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("/ui/index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("/ui/x.exe"), "application/octet-stream");
  EXPECT_EQ(FindEmbeddedFile("/ui/nothing.js"), nullptr);
}

TEST(EmbeddedFilesTest, NoScriptWritesHtmlOrInlineStyles) {
  // Data reaches the page as text only, and the Content-Security-Policy
  // forbids style attributes: neither may creep back in.
  for (const EmbeddedFile* f : Scripts()) {
    const std::string body(f->body);
    for (const char* banned : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                               "setAttribute('style'", "eval("}) {
      EXPECT_EQ(body.find(banned), std::string::npos) << f->path << " uses " << banned;
    }
  }
  const std::string html = Body("/ui/index.html");
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
  EXPECT_EQ(Matches(html, R"re(<script>([^<]*))re").size(), 0u) << "an inline script";
}

TEST(EmbeddedFilesTest, UplotIsTheVersionTheLockfilePins) {
  std::ifstream in(std::string(GLEANER_SOURCE_DIR) + "/ui/package-lock.json");
  std::stringstream text;
  text << in.rdbuf();
  const json lock = json::parse(text.str());
  const std::string version = lock["packages"]["node_modules/uplot"]["version"];
  EXPECT_THAT(Body("/ui/vendor/uPlot.iife.min.js"),
              ::testing::StartsWith("/*! https://github.com/leeoniya/uPlot (v" + version + ")"));
  EXPECT_THAT(Body("/ui/vendor/uPlot.min.css"), ::testing::HasSubstr(".uplot"));
  EXPECT_THAT(Body("/ui/vendor/uPlot-LICENSE.txt"), ::testing::HasSubstr("MIT"));
}

}  // namespace
}  // namespace gleaner::ui
