#include "service/auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

class AuthTest : public TempDirTest {};

TEST_F(AuthTest, ATokenFileReadableByItsOwnerAlone) {
  auto good = Write("good", "abcdefghijklmnopqrstuvwxyz012345\n");
  chmod(good.c_str(), 0600);
  auto token = LoadToken(good);
  ASSERT_TRUE(token.ok()) << token.message();
  EXPECT_EQ(token.value(), "abcdefghijklmnopqrstuvwxyz012345");  // Without the newline.
  auto open_to_all = Write("open", "abcdefghijklmnopqrstuvwxyz012345");
  chmod(open_to_all.c_str(), 0644);
  EXPECT_NE(LoadToken(open_to_all).message().find("chmod 600"), std::string::npos);
  auto short_one = Write("short", "abc");
  chmod(short_one.c_str(), 0600);
  EXPECT_NE(LoadToken(short_one).message().find("under 16"), std::string::npos);
  EXPECT_FALSE(LoadToken(dir_ / "missing").ok());
  // No message repeats what the file holds.
  EXPECT_EQ(LoadToken(short_one).message().find("abc\""), std::string::npos);
}

TEST(AuthTokenTest, SameTokenComparesWholeTokens) {
  EXPECT_TRUE(SameToken("a-token-of-some-length", "a-token-of-some-length"));
  EXPECT_FALSE(SameToken("a-token-of-some-length", "a-token-of-some-lengtH"));
  EXPECT_FALSE(SameToken("a-token", "a-token-of-some-length"));  // A prefix is not the token.
  EXPECT_FALSE(SameToken("", "a-token"));
}

TEST(AuthTokenTest, BearerTokens) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer   abc"), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_EQ(BearerToken(""), "");
}

TEST(AuthTokenTest, LoopbackHostHeaders) {
  for (const char* h : {"127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST:80", "[::1]", "[::1]:8000"}) {
    EXPECT_TRUE(IsLoopbackHostHeader(h)) << h;
  }
  for (const char* h : {"evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil:8000",
                        "127.0.0.1:", "127.0.0.1:80x", "[::1", "[::2]:80", "", "10.0.0.1:8000"}) {
    EXPECT_FALSE(IsLoopbackHostHeader(h)) << h;
  }
}

}  // namespace
}  // namespace anvil
