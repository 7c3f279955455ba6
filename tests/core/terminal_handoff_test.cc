#include "core/terminal_handoff.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "core/clock.h"

namespace gleaner::core {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

// A descriptor to hand around: one end of a pipe (the other is closed).
int Descriptor() {
  int p[2];
  EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
  close(p[1]);
  return p[0];
}

TEST(TerminalHandoffTest, OnlyItsOwnerOrRootTakesATerminalAndOnlyOnce) {
  ManualClock clock;
  TerminalHandoff handoff;
  const int fd = Descriptor();
  handoff.Offer(7, 1000, fd, clock.Now() + TerminalHandoff::kAttachWithin);

  const auto stranger = handoff.Take(7, 1001);
  EXPECT_EQ(stranger.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(stranger.status().message().find("only its owner (or root)"), std::string::npos);
  EXPECT_EQ(handoff.Take(8, 1000).status().code(), StatusCode::kNotFound);

  const auto taken = handoff.Take(7, 1000);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(*taken, fd);
  EXPECT_TRUE(IsOpen(fd));  // now the taker's
  EXPECT_EQ(handoff.Take(7, 1000).status().code(), StatusCode::kNotFound);
  close(fd);

  const int root_fd = Descriptor();
  handoff.Offer(9, 1000, root_fd, clock.Now() + TerminalHandoff::kAttachWithin);
  const auto by_root = handoff.Take(9, 0);
  ASSERT_TRUE(by_root.ok());
  close(*by_root);
}

TEST(TerminalHandoffTest, ATerminalNobodyTakesInTimeIsClosed) {
  ManualClock clock;
  TerminalHandoff handoff;
  const int late = Descriptor();
  const int early = Descriptor();
  handoff.Offer(1, 1000, late, clock.Now() + Seconds(60));
  handoff.Offer(2, 1000, early, clock.Now() + Seconds(10));
  clock.Advance(Seconds(30));
  EXPECT_EQ(handoff.Expire(clock.Now()), std::vector<int64_t>{2});
  EXPECT_FALSE(IsOpen(early));
  EXPECT_TRUE(IsOpen(late));
  EXPECT_EQ(handoff.Take(2, 1000).status().code(), StatusCode::kNotFound);
  clock.Advance(Seconds(30));
  EXPECT_EQ(handoff.Expire(clock.Now()), std::vector<int64_t>{1});
  EXPECT_FALSE(IsOpen(late));
}

TEST(TerminalHandoffTest, WhatIsStillHeldIsClosedWithIt) {
  ManualClock clock;
  const int fd = Descriptor();
  const int again = Descriptor();
  {
    TerminalHandoff handoff;
    handoff.Offer(1, 1000, fd, clock.Now() + Seconds(60));
    // Offered again (a relaunch): the earlier one is closed.
    handoff.Offer(1, 1000, again, clock.Now() + Seconds(60));
    EXPECT_FALSE(IsOpen(fd));
    EXPECT_TRUE(IsOpen(again));
  }
  EXPECT_FALSE(IsOpen(again));
}

}  // namespace
}  // namespace gleaner::core
