#include "core/gzip.h"

#include <gtest/gtest.h>

#include <string>

namespace anvil {
namespace {

TEST(GzipTest, RoundTripsAndCompressesRepeats) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "class ModelNew(nn.Module): return torch.relu(x)  # " + std::to_string(i % 7);
  const std::string gz = Gzip(text).value();
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");  // gzip's magic bytes: what DecompressionStream("gzip") reads
  EXPECT_LT(gz.size(), text.size() / 20);
  EXPECT_EQ(Gunzip(gz).value(), text);
  EXPECT_EQ(Gunzip(Gzip("").value()).value(), "");
}

TEST(GzipTest, RefusesWhatIsNotWhole) {
  const std::string gz = Gzip("hello, hello, hello").value();
  EXPECT_FALSE(Gunzip(gz.substr(0, gz.size() - 6)).ok());
  EXPECT_FALSE(Gunzip("plain text").ok());
}

}  // namespace
}  // namespace anvil
