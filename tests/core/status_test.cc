#include "core/status.h"

#include <gtest/gtest.h>

namespace gleaner::core {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s = NotFound("no GPU with UUID GPU-1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no GPU with UUID GPU-1");
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no GPU with UUID GPU-1");
}

TEST(StatusTest, WithContextPrefixesErrorsAndKeepsOk) {
  EXPECT_EQ(Unavailable("driver gone").WithContext("reading GPUs").message(),
            "reading GPUs: driver gone");
  EXPECT_EQ(Unavailable("x").WithContext("c").code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Status::Ok().WithContext("c").ok());
  EXPECT_EQ(Status::Ok().WithContext("c").message(), "");
}

TEST(StatusTest, EveryCodeHasAName) {
  for (StatusCode c :
       {StatusCode::kOk, StatusCode::kInvalidArgument, StatusCode::kNotFound,
        StatusCode::kNotSupported, StatusCode::kPermissionDenied, StatusCode::kUnavailable,
        StatusCode::kDeviceLost, StatusCode::kFailedPrecondition, StatusCode::kInternal}) {
    EXPECT_NE(StatusCodeName(c), "UNKNOWN");
  }
}

Status FailsWhen(bool fail) {
  GLEANER_RETURN_IF_ERROR(fail ? InvalidArgument("bad") : Status::Ok());
  return Internal("reached the end");
}

TEST(StatusTest, ReturnIfErrorReturnsEarlyOnlyOnError) {
  EXPECT_EQ(FailsWhen(true).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FailsWhen(false).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace gleaner::core
