// A long-lived trusted Python process of anvil's own that it talks to on a
// socket pair (the zygote, core/zygote.h; a task server, tasks/task_server.h):
// started with fork+exec, its first message saying whether it is ready.
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/child_env.h"
#include "core/status.h"

namespace anvil {

struct PythonPeer {
  pid_t pid = -1;
  int sock = -1;      // anvil's end (close-on-exec).
  std::string hello;  // Its first message.
};

// Starts `python -m <module> args...` with anvil's Python, its package on
// PYTHONPATH, the allowed part of anvil's environment plus `env`
// (core/child_env.h), stdin and stdout on /dev/null (anvil's stdout is its
// verdicts) and the other end of a SOCK_SEQPACKET pair as fd 3, and waits up
// to `timeout` for its first message. It gets no PR_SET_PDEATHSIG (that
// follows the forking thread, not the process): it must end when its socket
// does. Error when it cannot be started or says nothing in time (it is then
// killed and reaped).
Result<PythonPeer> StartPythonPeer(const std::string& module, const std::vector<std::string>& args, const EnvPairs& env,
                                   std::chrono::milliseconds timeout);

// Kills and reaps it and closes anvil's end.
void StopPythonPeer(PythonPeer& peer);

}  // namespace anvil
