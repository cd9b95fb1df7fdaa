#include "core/base64.h"

#include <gtest/gtest.h>

#include "core/sha256.h"

namespace anvil {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64(std::string("\xff\xfe\x00", 3)), "//4A");
}

TEST(Base64Test, ACspHashOfAScript) {
  // `printf 'alert(1)' | openssl dgst -sha256 -binary | base64`
  EXPECT_EQ(Base64(HexBytes(Sha256Hex("alert(1)"))), "bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI=");
}

TEST(Base64Test, HexBytesRefusesWhatIsNotHex) {
  EXPECT_EQ(HexBytes("00ff10"), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(HexBytes("0"), "");
  EXPECT_EQ(HexBytes("zz"), "");
}

}  // namespace
}  // namespace anvil
