#include "gen/retry.h"

#include <gtest/gtest.h>

#include <ctime>

namespace anvil {
namespace {

using std::chrono::milliseconds;

TEST(RetryTest, RetriesRateLimitsAndServerErrorsOnly) {
  for (int s : {408, 409, 429, 500, 502, 503, 504}) EXPECT_TRUE(RetryableStatus(s)) << s;
  for (int s : {200, 400, 401, 403, 404, 422}) EXPECT_FALSE(RetryableStatus(s)) << s;
}

TEST(RetryTest, BacksOffExponentiallyWithJitterUpToTheCap) {
  RetryPolicy p;
  EXPECT_EQ(RetryDelay(p, 0, std::nullopt, 0.0), milliseconds(500));
  EXPECT_EQ(RetryDelay(p, 1, std::nullopt, 0.0), milliseconds(1000));
  EXPECT_EQ(RetryDelay(p, 3, std::nullopt, 0.0), milliseconds(4000));
  EXPECT_EQ(RetryDelay(p, 10, std::nullopt, 0.0), milliseconds(8000));
  EXPECT_EQ(RetryDelay(p, 0, std::nullopt, 0.999), milliseconds(375));  // At most a quarter less.
  EXPECT_EQ(RetryDelay(p, 1000, std::nullopt, 0.0), milliseconds(8000));
}

TEST(RetryTest, TheServersDelayWins) {
  RetryPolicy p;
  EXPECT_EQ(RetryDelay(p, 0, milliseconds(30000), 0.5), milliseconds(30000));
  EXPECT_EQ(ServerRetryDelay({{"retry-after", "2"}}), milliseconds(2000));
  EXPECT_EQ(ServerRetryDelay({{"retry-after", "0.5"}}), milliseconds(500));
  EXPECT_EQ(ServerRetryDelay({{"retry-after-ms", "250"}, {"retry-after", "9"}}), milliseconds(250));
  EXPECT_EQ(ServerRetryDelay({{"retry-after", "soon"}}), std::nullopt);
  EXPECT_EQ(ServerRetryDelay({{"retry-after", "-1"}}), std::nullopt);
  EXPECT_EQ(ServerRetryDelay({}), std::nullopt);
  // An HTTP date: about as far ahead as it says (whole seconds).
  char date[64];
  const std::time_t later = std::time(nullptr) + 30;
  std::tm tm;
  gmtime_r(&later, &tm);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  auto d = ServerRetryDelay({{"retry-after", date}});
  ASSERT_TRUE(d.has_value()) << date;
  EXPECT_GE(d->count(), 28000);
  EXPECT_LE(d->count(), 30000);
  EXPECT_EQ(ServerRetryDelay({{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}}), milliseconds(0));
}

}  // namespace
}  // namespace anvil
