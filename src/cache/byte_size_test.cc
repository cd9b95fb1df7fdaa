#include "cache/byte_size.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(CacheByteSizeTest, ReadsUnitsAsPowersOf1024) {
  EXPECT_EQ(ParseByteSize("4096").value(), 4096u);
  EXPECT_EQ(ParseByteSize("1K").value(), 1024u);
  EXPECT_EQ(ParseByteSize("500M").value(), 500u * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("50G").value(), 50ull * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize(" 50gib ").value(), 50ull * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("50GB").value(), 50ull * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("1.5T").value(), 3ull * 512 * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseByteSize("0").value(), 0u);
}

TEST(CacheByteSizeTest, RejectsWhatIsNotASizeAndSaysWhatToGive) {
  for (const char* text : {"", "G", "abc", "-5G", "5X", "5 GG", "1.2.3M", "."}) {
    auto parsed = ParseByteSize(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.message().find("e.g. 50G"), std::string::npos) << parsed.message();
  }
  EXPECT_FALSE(ParseByteSize("99999999T").ok());
}

TEST(CacheByteSizeTest, FormatsWithBinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(720ull * 1024 * 1024), "720.0 MiB");
  EXPECT_EQ(FormatBytes(50ull * 1024 * 1024 * 1024), "50.0 GiB");
}

}  // namespace
}  // namespace anvil
