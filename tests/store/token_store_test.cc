// API tokens on every backend: found by the digest of their secret, until
// revoked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "store_backend.h"

namespace gleaner::store {
namespace {

const core::TimePoint kNow = core::FromUnixMicros(int64_t{1'800'000'000} * 1'000'000);

TokenRecord Token(const std::string& user, const std::string& name) {
  TokenRecord t;
  t.user = user;
  t.uid = user == "alice" ? 1000 : 1001;
  t.name = name;
  t.created_at = kNow;
  return t;
}

class TokenStoreTest : public StoreTest {};

TEST_P(TokenStoreTest, FoundByDigestUntilRevoked) {
  auto laptop = store_->AddToken(Token("alice", "laptop"), std::string(64, 'a'));
  ASSERT_TRUE(laptop.ok()) << laptop.status().ToString();
  EXPECT_GT(laptop->id, 0);
  auto ci = store_->AddToken(Token("bob", "ci"), std::string(64, 'b'));
  ASSERT_TRUE(ci.ok()) << ci.status().ToString();
  EXPECT_GT(ci->id, laptop->id);

  auto found = store_->FindToken(std::string(64, 'a'));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(*found, *laptop);
  EXPECT_EQ(found->user, "alice");
  EXPECT_EQ(found->uid, 1000u);
  EXPECT_EQ(store_->FindToken(std::string(64, 'c')).status().code(), core::StatusCode::kNotFound);

  ASSERT_TRUE(store_->RevokeToken(laptop->id, kNow + core::Seconds(5)).ok());
  EXPECT_EQ(store_->FindToken(std::string(64, 'a')).status().code(), core::StatusCode::kNotFound);
  EXPECT_EQ(store_->RevokeToken(laptop->id, kNow).code(), core::StatusCode::kNotFound);
  EXPECT_EQ(store_->RevokeToken(99, kNow).code(), core::StatusCode::kNotFound);

  auto all = store_->ListTokens();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);  // revoked ones included, oldest first
  EXPECT_EQ((*all)[0].name, "laptop");
  EXPECT_EQ((*all)[0].revoked_at, kNow + core::Seconds(5));
  EXPECT_EQ((*all)[1], *ci);
}

TEST_P(TokenStoreTest, ScopesAndProjectsRoundTripAndOldTokensHaveEveryScope) {
  TokenRecord scoped = Token("alice", "ci");
  scoped.scopes = std::vector<std::string>{"read", "submit"};
  scoped.projects = {"vision", "nlp"};
  ASSERT_TRUE(store_->AddToken(scoped, std::string(64, 'c')).ok());
  auto found = store_->FindToken(std::string(64, 'c'));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->scopes, scoped.scopes);
  EXPECT_EQ(found->projects, scoped.projects);
  ASSERT_TRUE(store_->AddToken(Token("bob", "laptop"), std::string(64, 'd')).ok());
  EXPECT_FALSE(store_->FindToken(std::string(64, 'd'))->scopes.has_value());  // every scope
  EXPECT_TRUE(store_->FindToken(std::string(64, 'd'))->projects.empty());
}

TEST_P(TokenStoreTest, ADigestIsStoredOnce) {
  ASSERT_TRUE(store_->AddToken(Token("alice", "laptop"), std::string(64, 'a')).ok());
  EXPECT_FALSE(store_->AddToken(Token("bob", "copy"), std::string(64, 'a')).ok());
  EXPECT_EQ(store_->ListTokens()->size(), 1u);
}

JoinToken JoinFor(const std::string& host, bool replace = false) {
  return {host, kNow, kNow + core::Seconds(3600), replace};
}

TEST_P(TokenStoreTest, AJoinTokenIsSpentOnceByItsHostBeforeItExpires) {
  using ::testing::HasSubstr;
  ASSERT_TRUE(store_->AddJoinToken(JoinFor("gpu-a"), std::string(64, 'a')).ok());
  EXPECT_EQ(*store_->AgentGeneration("gpu-a"), 0);
  const auto spend = [&](char digest, const std::string& host, core::TimePoint at = kNow) {
    return store_->SpendJoinToken(std::string(64, digest), host, at);
  };
  EXPECT_THAT(spend('a', "gpu-b").status().message(), HasSubstr("is for host gpu-a, not gpu-b"));
  EXPECT_THAT(spend('z', "gpu-a").status().message(), HasSubstr("unknown join token"));
  EXPECT_THAT(spend('a', "gpu-a", kNow + core::Seconds(3600)).status().message(),
              HasSubstr("expired at"));
  auto first = spend('a', "gpu-a");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(*store_->AgentGeneration("gpu-a"), 1);
  EXPECT_EQ(spend('a', "gpu-a").status().code(), core::StatusCode::kUnauthenticated);
  EXPECT_THAT(spend('a', "gpu-a").status().message(), HasSubstr("was used at"));

  // A joined host is taken only by a token that may replace it, even one
  // issued before it joined.
  ASSERT_TRUE(store_->AddJoinToken(JoinFor("gpu-a"), std::string(64, 'b')).ok());
  EXPECT_THAT(spend('b', "gpu-a").status().message(), HasSubstr("has joined already"));
  ASSERT_TRUE(store_->AddJoinToken(JoinFor("gpu-a", true), std::string(64, 'c')).ok());
  EXPECT_EQ(*spend('c', "gpu-a"), 2);
  EXPECT_EQ(*store_->AgentGeneration("gpu-a"), 2);
  EXPECT_EQ(*store_->AgentGeneration("gpu-b"), 0);
  EXPECT_EQ(*store_->AgentGenerations(), (std::map<std::string, int64_t>{{"gpu-a", 2}}));
}

GLEANER_STORE_CONFORMANCE(TokenStoreTest);

}  // namespace
}  // namespace gleaner::store
