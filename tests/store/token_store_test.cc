// API tokens on every backend: found by the digest of their secret, until
// revoked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST_P(TokenStoreTest, ADigestIsStoredOnce) {
  ASSERT_TRUE(store_->AddToken(Token("alice", "laptop"), std::string(64, 'a')).ok());
  EXPECT_FALSE(store_->AddToken(Token("bob", "copy"), std::string(64, 'a')).ok());
  EXPECT_EQ(store_->ListTokens()->size(), 1u);
}

GLEANER_STORE_CONFORMANCE(TokenStoreTest);

}  // namespace
}  // namespace gleaner::store
