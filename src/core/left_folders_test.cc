#include "core/left_folders.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "core/temp_dir_fixture.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

// A pid no process has now: a child that has exited and been reaped.
pid_t GonePid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

class LeftFoldersTest : public TempDirTest {
 protected:
  // A folder as MakeTempDir names it, with a file, last changed `age_s` ago.
  fs::path Folder(const std::string& prefix, pid_t pid, int age_s, const std::string& suffix = "AbC123") {
    const fs::path dir = dir_ / (prefix + std::to_string(pid) + "-" + suffix);
    Write(dir.filename() / "trials" / "out0.bin", std::string(1000, 'x'));
    const std::time_t then = std::time(nullptr) - age_s;
    struct timespec times[2] = {{then, 0}, {then, 0}};
    EXPECT_EQ(::utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
    return dir;
  }
};

TEST_F(LeftFoldersTest, RemovesOnlyOldFoldersOfProcessesThatAreGone) {
  const pid_t gone = GonePid();
  const fs::path left = Folder("anvil-eval-", gone, 3600);
  const fs::path left_extract = Folder("anvil-extract-", gone, 3600, "Zz9yY8");
  const fs::path left_build = Folder("anvil-build-", gone, 3600, "Bb7vV6");  // A build in /dev/shm, killed.
  const fs::path recent = Folder("anvil-eval-", gone, 5, "Qq1wW2");          // Maybe another pid namespace's, live.
  const fs::path mine = Folder("anvil-eval-", ::getpid(), 3600, "Mm3nN4");   // A live owner.
  const fs::path bench = Folder("anvil-bench-", gone, 3600);                 // A bench's results: never.
  const fs::path kept = Folder("anvil-eval-", gone, 3600, "Kk5lL6");         // --keep-work.
  Write(kept.filename() / kKeptMarker, "kept");
  const fs::path stranger = dir_ / "anvil-eval-notapid";
  fs::create_directories(stranger);

  SweptFolders swept = SweepLeftFolders({dir_});
  EXPECT_EQ(swept.folders, 3);
  EXPECT_GE(swept.bytes, 3000u);
  EXPECT_FALSE(fs::exists(left));
  EXPECT_FALSE(fs::exists(left_extract));
  EXPECT_FALSE(fs::exists(left_build));
  for (const auto& stays : {recent, mine, bench, kept, stranger}) EXPECT_TRUE(fs::exists(stays)) << stays;
  EXPECT_EQ(SweepLeftFolders({dir_}).folders, 0);
}

TEST_F(LeftFoldersTest, MakeTempDirNamesItsOwner) {
  auto made = MakeTempDir("anvil-eval-");
  ASSERT_TRUE(made.ok());
  const std::string name = made.value().filename().string();
  EXPECT_EQ(name.rfind("anvil-eval-" + std::to_string(::getpid()) + "-", 0), 0u) << name;
  (void)RemoveTree(made.value());
}

}  // namespace
}  // namespace anvil
