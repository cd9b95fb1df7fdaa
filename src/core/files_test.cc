#include "core/files.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace anvil {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<fs::path> dir = MakeTempDir("anvil_files_test_");
    ASSERT_TRUE(dir.ok()) << dir.message();
    dir_ = dir.value();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      EXPECT_TRUE(RemoveTree(dir_).ok());
    }
  }
  fs::path dir_;
};

TEST_F(FilesTest, MakeTempDirCreatesPrivateDirectory) {
  EXPECT_TRUE(fs::is_directory(dir_));
  EXPECT_EQ(dir_.filename().string().rfind("anvil_files_test_", 0), 0u);
  struct stat st;
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(FilesTest, MakeTempDirRejectsSlashInPrefix) { EXPECT_FALSE(MakeTempDir("a/b").ok()); }

TEST_F(FilesTest, MakeScratchDirHonorsAnvilScratchDir) {
  ::setenv("ANVIL_SCRATCH_DIR", dir_.c_str(), 1);
  Result<fs::path> inner = MakeScratchDir("scratch_", 1);
  ::unsetenv("ANVIL_SCRATCH_DIR");
  ASSERT_TRUE(inner.ok()) << inner.message();
  EXPECT_EQ(inner.value().parent_path(), dir_);
}

TEST_F(FilesTest, MakeScratchDirUsesMemoryOnlyWhenItHasRoom) {
  ::unsetenv("ANVIL_SCRATCH_DIR");
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  // No tmpfs holds an exabyte: the scratch falls back to $TMPDIR.
  Result<fs::path> big = MakeScratchDir("big_", std::uintmax_t{1} << 60);
  Result<fs::path> small = MakeScratchDir("small_", 1);
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(big.ok()) << big.message();
  EXPECT_EQ(big.value().parent_path(), dir_);
  ASSERT_TRUE(small.ok()) << small.message();
  if (::access("/dev/shm", W_OK) == 0) EXPECT_EQ(small.value().parent_path(), fs::path("/dev/shm"));
  EXPECT_TRUE(RemoveTree(small.value()).ok());
  EXPECT_FALSE(MakeScratchDir("a/b", 1).ok());
}

TEST_F(FilesTest, MakeTempDirHonorsTmpdir) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  ::setenv("TMPDIR", dir_.c_str(), 1);
  Result<fs::path> inner = MakeTempDir("inner_");
  if (old) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_TRUE(inner.ok()) << inner.message();
  EXPECT_EQ(inner.value().parent_path(), dir_);
}

TEST_F(FilesTest, WriteThenReadRoundTripsBinary) {
  const fs::path file = dir_ / "data.bin";
  const std::string payload("a\0b\xff\n", 5);
  ASSERT_TRUE(WriteFileAtomic(file, payload).ok());
  Result<std::string> read = ReadFile(file);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(read.value(), payload);
}

TEST_F(FilesTest, WriteReplacesAndLeavesNoTemporaries) {
  const fs::path file = dir_ / "f.txt";
  ASSERT_TRUE(WriteFileAtomic(file, "first version").ok());
  ASSERT_TRUE(WriteFileAtomic(file, "second").ok());
  EXPECT_EQ(ReadFile(file).value(), "second");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(FilesTest, ReadLargeFile) {
  const fs::path file = dir_ / "big";
  std::string payload(300000, 'z');
  payload[123456] = 'q';
  ASSERT_TRUE(WriteFileAtomic(file, payload).ok());
  EXPECT_EQ(ReadFile(file).value(), payload);
}

TEST_F(FilesTest, ReadMissingFileIsError) {
  Result<std::string> read = ReadFile(dir_ / "missing");
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.message().find("missing"), std::string::npos);
}

TEST_F(FilesTest, WriteIntoMissingDirectoryIsError) {
  Status s = WriteFileAtomic(dir_ / "no" / "such" / "file", "x");
  EXPECT_FALSE(s.ok());
}

TEST_F(FilesTest, RemoveTreeRemovesNestedAndToleratesMissing) {
  const fs::path nested = dir_ / "a" / "b";
  fs::create_directories(nested);
  ASSERT_TRUE(WriteFileAtomic(nested / "f", "x").ok());
  EXPECT_TRUE(RemoveTree(dir_ / "a").ok());
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_TRUE(RemoveTree(dir_ / "never_existed").ok());
}

}  // namespace
}  // namespace anvil
