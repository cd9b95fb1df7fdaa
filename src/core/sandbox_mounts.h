// The layers of the candidate sandbox (core/sandbox.h) made in the child's
// private mount namespace: `rofs` (every other mount read-only, a /dev/shm of
// its own) and `root` (a root of the listed paths only). Everything here runs
// between fork() and exec() in the child of a threaded parent: system calls
// only, no allocation, fixed buffers.
#pragma once

#include <string>
#include <vector>

namespace anvil {

// Whether `path` is `dir` or inside it.
bool PathIsUnder(const char* path, const char* dir);

// In the child's private mount namespace: a private /dev/shm, the writable
// folders bound onto themselves (mounts of their own), then every other mount
// read-only.
// Async-signal-safe (the child of a threaded parent): no allocation, the
// table read through a fixed buffer. True when every remount took.
bool MakeMountsReadOnly(const std::vector<std::string>& writable, const std::vector<std::string>& shm_readable);

// In the child's private mount namespace, where Landlock is not in force: a
// new root, an empty tmpfs holding only `paths` ("r:/path" read-only,
// "w:/path" read-write; sorted, a folder before what is inside it), each bound
// where it was, and a /dev/shm of its own; then pivot_root into it, the old
// root detached, the new one made read-only, and the working folder kept.
// Every path is opened before anything is covered. False (the layer
// missing, the mounts undone) when a path cannot be kept; a path that does not
// exist is skipped. Async-signal-safe.
bool OwnRoot(const std::vector<std::string>& paths);

}  // namespace anvil
