// Test-only: a GoogleTest fixture owning a fresh cache folder laid out as
// anvil lays it out (cache_scan.h), with helpers that make fake entries of
// known sizes and last uses. Included by *_test.cc files only.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "compile/torch_pch.h"
#include "core/temp_dir_fixture.h"

namespace anvil {

class FakeCacheTest : public TempDirTest {
 protected:
  using Age = std::chrono::hours;

  void SetUp() override {
    TempDirTest::SetUp();
    now_ = std::filesystem::file_time_type::clock::now();
  }

  // A 64-character key made of `c`.
  static std::string Key(char c) { return std::string(64, c); }

  // artifacts/<key>/ holding `file` of `bytes` bytes, built (and its lock
  // made, as builders do) `age` ago.
  std::filesystem::path Artifact(const std::string& key, std::uintmax_t bytes, Age age,
                                 const std::string& file = "libcandidate.so") {
    Write("artifacts/" + key + "/complete", "");
    Write("artifacts/" + key + "/" + file, std::string(bytes, 'x'));
    Write("artifacts/locks/" + key + ".lock", "");
    return Used(dir_ / "artifacts" / key, age);
  }

  std::filesystem::path TorchPch(const std::string& key, std::uintmax_t bytes, Age age) {
    return Artifact(key, bytes, age, kTorchPchFile);
  }

  // tasks/<name>/ with spec.json of `bytes` bytes, and its lock beside it.
  std::filesystem::path PreparedTask(const std::string& name, std::uintmax_t bytes, Age age) {
    Write("tasks/" + name + "/spec.json", std::string(bytes, 's'));
    Write("tasks/" + name + ".lock", "");
    return Used(dir_ / "tasks" / name, age);
  }

  // Sets the last use of `path` to `age` ago.
  std::filesystem::path Used(const std::filesystem::path& path, Age age) {
    std::filesystem::last_write_time(path, now_ - age);
    return path;
  }

  std::filesystem::file_time_type now_;
};

}  // namespace anvil
