// Test-only: a GoogleTest fixture owning a fresh temporary folder, with a
// helper that writes a file (creating parent folders) below it. Included by
// *_test.cc files only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/files.h"

namespace anvil {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("anvil-test-").value(); }
  void TearDown() override { (void)RemoveTree(dir_); }
  // Writes `text` to dir_/rel and returns that path.
  std::filesystem::path Write(const std::filesystem::path& rel, const std::string& text) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
    return dir_ / rel;
  }
  std::filesystem::path dir_;
};

}  // namespace anvil
