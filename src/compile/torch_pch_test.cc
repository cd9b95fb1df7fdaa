#include "compile/torch_pch.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/file_lock.h"
#include "core/files.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

class TorchPchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("anvil-torch-pch-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override {
    ::unsetenv("ANVIL_PCH_WAIT");
    fs::remove_all(dir_);
  }
  fs::path dir_;
  const std::vector<std::string> flags_ = {"-O2", "-std=c++17"};
};

TEST_F(TorchPchTest, ABuildThatFindsThePchBeingMadeGoesOnWithoutItWhenNotToWait) {
  const ArtifactCache cache(dir_);
  FileLock builder(cache.LockPath(TorchPchKey(flags_, "2.11.0")));
  ASSERT_TRUE(builder.held());
  ::setenv("ANVIL_PCH_WAIT", "0", 1);
  std::string log;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(TorchExtensionPch(flags_, "2.11.0", cache, BuildOptions{}, {}, log).has_value());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_NE(log.find("compiles without it rather than wait"), std::string::npos) << log;
}

TEST_F(TorchPchTest, ABuildThatWaitsUsesWhatTheOtherBuilt) {
  const ArtifactCache cache(dir_);
  const std::string key = TorchPchKey(flags_, "2.11.0");
  auto builder = std::make_unique<FileLock>(cache.LockPath(key));
  ASSERT_TRUE(builder->held());
  ::setenv("ANVIL_PCH_WAIT", "1", 1);
  // The other build publishes its PCH, then lets go of the lock.
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto scratch = cache.Scratch();
    ASSERT_TRUE(scratch.ok());
    fs::create_directories(scratch.value() / "torch");
    ASSERT_TRUE(WriteFileAtomic(scratch.value() / "torch" / "extension.h", "#include_next <torch/extension.h>\n").ok());
    ASSERT_TRUE(WriteFileAtomic(scratch.value() / "torch" / "extension.h.gch", "pch").ok());
    ASSERT_TRUE(cache.Publish(key, scratch.value()).ok());
    builder.reset();
  });
  std::string log;
  const auto pch = TorchExtensionPch(flags_, "2.11.0", cache, BuildOptions{}, {}, log);
  other.join();
  ASSERT_TRUE(pch.has_value()) << log;
  EXPECT_EQ(pch->use, "cached");
  EXPECT_TRUE(fs::exists(pch->include_dir / "torch" / "extension.h.gch"));
}

}  // namespace
}  // namespace anvil
