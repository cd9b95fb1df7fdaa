#include "core/sandbox_mounts.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace anvil {

bool PathIsUnder(const char* path, const char* dir) {
  const std::size_t n = std::strlen(dir);
  return std::strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/'));
}

namespace {

// mountinfo escapes a space, tab, newline and backslash in a path as \ooo.
void UnescapeOctal(char* s) {
  char* out = s;
  for (char* in = s; *in != '\0'; ++out) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
      *out = static_cast<char>((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
      in += 4;
    } else {
      *out = *in++;
    }
  }
  *out = '\0';
}

// One line of /proc/self/mountinfo: its mount point read-only (keeping the
// flags a user namespace may not drop), unless it is writable, /proc (its
// kernel settings are made read-only on their own) or /dev (the device files
// must stay usable). sysfs is made read-only too: a child whose user maps to
// the host's root would pass its permission checks.
bool RemountLineReadOnly(char* line, const std::vector<std::string>& writable) {
  char* field[6] = {};
  int n = 0;
  for (char* p = line; n < 6 && *p != '\0';) {
    field[n++] = p;
    while (*p != '\0' && *p != ' ') ++p;
    if (*p == ' ') *p++ = '\0';
  }
  if (n < 6) return true;
  char* point = field[4];
  UnescapeOctal(point);
  for (const char* kernel : {"/proc", "/dev"}) {
    if (PathIsUnder(point, kernel)) return true;
  }
  for (const auto& w : writable) {
    if (PathIsUnder(point, w.c_str())) return true;
  }
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  for (char* opt = field[5]; *opt != '\0';) {
    char* end = opt;
    while (*end != '\0' && *end != ',') ++end;
    const char saved = *end;
    *end = '\0';
    if (std::strcmp(opt, "ro") == 0) return true;  // Already.
    if (std::strcmp(opt, "nosuid") == 0) flags |= MS_NOSUID;
    if (std::strcmp(opt, "nodev") == 0) flags |= MS_NODEV;
    if (std::strcmp(opt, "noexec") == 0) flags |= MS_NOEXEC;
    if (std::strcmp(opt, "noatime") == 0) flags |= MS_NOATIME;
    if (std::strcmp(opt, "nodiratime") == 0) flags |= MS_NODIRATIME;
    if (std::strcmp(opt, "relatime") == 0) flags |= MS_RELATIME;
    if (std::strcmp(opt, "strictatime") == 0) flags |= MS_STRICTATIME;
    *end = saved;
    opt = saved == ',' ? end + 1 : end;
  }
  return ::mount(nullptr, point, nullptr, flags, nullptr) == 0;
}

// Creates `path`'s missing folders (and the last one a folder or, when
// `file`, an empty file). Async-signal-safe.
bool MakePath(const char* path, bool file) {
  char buf[PATH_MAX];
  const std::size_t n = std::strlen(path);
  if (n == 0 || n >= sizeof(buf)) return false;
  std::memcpy(buf, path, n + 1);
  for (std::size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    const char saved = buf[i];
    buf[i] = '\0';
    if (i == n && file) {
      // There already when a recursive bind of a folder above it carried
      // its mount along (a read-only file in a scratch under /dev/shm).
      struct stat st;
      const int fd = ::open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) {
        ::close(fd);
      } else if (::stat(buf, &st) != 0) {
        return false;
      }
    } else if (::mkdir(buf, 0700) != 0 && errno != EEXIST) {
      return false;
    }
    buf[i] = saved;
  }
  return true;
}

// /proc/self/fd/<fd> into `buf` (at least 32 bytes). Async-signal-safe.
void FdPath(int fd, char* buf) {
  char digits[16];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + fd % 10);
    fd /= 10;
  } while (fd > 0 && k < 15);
  std::memcpy(buf, "/proc/self/fd/", 14);
  for (int i = 0; i < k; ++i) buf[14 + i] = digits[k - 1 - i];
  buf[14 + k] = '\0';
}

// `base` + `path` into `out` (PATH_MAX). Async-signal-safe.
bool Join(const char* base, const char* path, char* out) {
  const std::size_t a = std::strlen(base), b = std::strlen(path);
  if (a + b + 1 > PATH_MAX) return false;
  std::memcpy(out, base, a);
  std::memcpy(out + a, path, b + 1);
  return true;
}

// Remounts the bind mount at `target` read-only, keeping the flags of the
// mount `fd` lies on (a user namespace may not drop them). Async-signal-safe.
bool BindReadOnly(int fd, const char* target) {
  struct statvfs was;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  if (::fstatvfs(fd, &was) == 0) {
    if (was.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (was.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (was.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (was.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (was.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (was.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  }
  return ::mount(nullptr, target, nullptr, flags, nullptr) == 0;
}

// One path a mount namespace keeps, opened (O_PATH) before anything covers it.
struct KeptPath {
  int fd;
  const char* path;
  bool writable;
  bool is_file;
};

// Opens `path` into kept[*n] while there is room. False when it exists but
// cannot be kept; a missing path is skipped. Async-signal-safe.
bool Keep(const char* path, bool writable, KeptPath* kept, int room, int* n) {
  const int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  struct stat st;
  if (*n == room || ::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  kept[(*n)++] = {fd, path, writable, !S_ISDIR(st.st_mode)};
  return true;
}

// Binds the kept path at `target` (made first), read-only unless writable.
// Async-signal-safe.
bool BindKept(const KeptPath& k, const char* target) {
  char from[32];
  FdPath(k.fd, from);
  return MakePath(target, k.is_file) && ::mount(from, target, nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
         (k.writable || BindReadOnly(k.fd, target));
}

// /dev/shm holds every job's memory-backed scratch folder: the child gets an
// empty one of its own (the driver and Python may still make files there),
// with its own paths there bound back in where they were: `writable` as they
// are, `readable` read-only. Async-signal-safe.
bool PrivateShm(const std::vector<std::string>& writable, const std::vector<std::string>& readable) {
  struct stat shm;
  if (::stat("/dev/shm", &shm) != 0) return true;  // Nothing to share.
  constexpr int kRoom = 256;                       // A task's input sets (trials, timing sets) and files.
  KeptPath kept[kRoom];
  int n = 0;
  bool ok = true;
  for (const auto* list : {&writable, &readable}) {
    for (const auto& p : *list) {
      if (!PathIsUnder(p.c_str(), "/dev/shm") || std::strcmp(p.c_str(), "/dev/shm") == 0) continue;
      // A path that cannot be kept: no private /dev/shm, the child must still reach its own paths.
      ok = Keep(p.c_str(), list == &writable, kept, kRoom, &n) && ok;
    }
  }
  ok = ok && ::mount("anvil-shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0;
  for (int i = 0; i < n; ++i) {
    ok = ok && BindKept(kept[i], kept[i].path);
    ::close(kept[i].fd);
  }
  return ok;
}

// /proc's kernel settings read-only, whatever the rest of /proc is (as
// container runtimes do): a child whose user maps to the host's root could
// otherwise write sysctls once /proc is writable for its threads' names.
// Async-signal-safe.
bool ProcSettingsReadOnly() {
  bool all = true;
  for (const char* p : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}) {
    const int fd = ::open(p, O_PATH | O_CLOEXEC);
    if (fd < 0) continue;  // Not on this kernel.
    all = ::mount(p, p, nullptr, MS_BIND | MS_REC, nullptr) == 0 && BindReadOnly(fd, p) && all;
    ::close(fd);
  }
  return all;
}

}  // namespace

bool MakeMountsReadOnly(const std::vector<std::string>& writable, const std::vector<std::string>& shm_readable) {
  // Without a private /dev/shm the rest still applies; the layer is then reported missing.
  const bool private_shm = PrivateShm(writable, shm_readable);
  for (const auto& w : writable) {
    if (PathIsUnder(w.c_str(), "/dev") || PathIsUnder(w.c_str(), "/proc") || PathIsUnder(w.c_str(), "/sys")) continue;
    if (::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) return false;
  }
  const int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[16384];
  std::size_t have = 0;
  bool all = true;
  while (true) {
    const ssize_t got = ::read(fd, buf + have, sizeof(buf) - 1 - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<std::size_t>(got);
    buf[have] = '\0';
    char* start = buf;
    for (char* nl = std::strchr(start, '\n'); nl != nullptr; nl = std::strchr(start, '\n')) {
      *nl = '\0';
      all = RemountLineReadOnly(start, writable) && all;
      start = nl + 1;
    }
    have = static_cast<std::size_t>(buf + have - start);
    std::memmove(buf, start, have);
    if (have == sizeof(buf) - 1) {  // A line longer than the buffer: a mount point nobody uses.
      have = 0;
      all = false;
    }
  }
  ::close(fd);
  return ProcSettingsReadOnly() && all && private_shm;
}

bool OwnRoot(const std::vector<std::string>& paths) {
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return false;
  constexpr int kRoom = 1024;
  KeptPath kept[kRoom];
  int n = 0;
  bool ok = true;
  for (const auto& entry : paths) {
    if (entry.size() >= 3) ok = Keep(entry.c_str() + 2, entry[0] == 'w', kept, kRoom, &n) && ok;
  }
  // The new root is mounted over a folder that is none of the paths and not
  // inside one: a recursive bind of a path would carry it along.
  const char* root = nullptr;
  for (const char* dir : {"/mnt", "/media", "/srv", "/home", "/root", "/var", "/boot", "/tmp"}) {
    struct stat st;
    bool clear = ::stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
    for (int i = 0; clear && i < n; ++i) clear = !PathIsUnder(dir, kept[i].path);
    if (clear) {
      root = dir;
      break;
    }
  }
  const bool mounted =
      ok && root != nullptr && ::mount("anvil-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0;
  ok = mounted;
  char target[PATH_MAX];
  // The paths outside /dev/shm, then a /dev/shm of its own (over a shared one
  // a listed /dev brought), then the paths inside it.
  for (const bool shm : {false, true}) {
    if (shm) {
      ok = ok && Join(root, "/dev/shm", target) && MakePath(target, false) &&
           ::mount("anvil-shm", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0;
    }
    for (int i = 0; i < n; ++i) {
      if (PathIsUnder(kept[i].path, "/dev/shm") == shm)
        ok = ok && Join(root, kept[i].path, target) && BindKept(kept[i], target);
    }
  }
  for (int i = 0; i < n; ++i) ::close(kept[i].fd);
  char old_root[PATH_MAX];
  ok = ok && Join(root, "/.old-root", old_root) && MakePath(old_root, false) &&
       syscall(SYS_pivot_root, root, old_root) == 0;
  if (!ok) {
    if (mounted) ::umount2(root, MNT_DETACH);  // The child keeps the tree it had.
    return false;
  }
  // From here on the child lives in the new root: only the report can fail.
  bool all = ::chdir("/") == 0 && ::umount2("/.old-root", MNT_DETACH) == 0 && ::rmdir("/.old-root") == 0;
  all = ProcSettingsReadOnly() && all;
  all = ::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) == 0 && all;
  if (::chdir(cwd) != 0) {
    (void)::chdir("/");
    all = false;
  }
  return all;
}

}  // namespace anvil
