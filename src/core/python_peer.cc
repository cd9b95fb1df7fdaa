#include "core/python_peer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/environment.h"
#include "core/unix_message.h"

namespace anvil {

Result<PythonPeer> StartPythonPeer(const std::string& module, const std::vector<std::string>& args, const EnvPairs& env,
                                   std::chrono::milliseconds timeout) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::MachineError(std::string("socketpair: ") + strerror(errno));
  }
  // PYTHONSAFEPATH: the working folder is not an import path.
  EnvPairs added = {{"PYTHONSAFEPATH", "1"},
                    {"PYTHONDONTWRITEBYTECODE", "1"},
                    {"PYTHONUNBUFFERED", "1"},
                    {"PYTHONWARNINGS", "ignore"},
                    {"PYTHONPATH", PythonPackageDir().string()}};
  added.insert(added.end(), env.begin(), env.end());
  std::vector<std::string> env_strings = EnvStrings(ChildEnvironment(added));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = {PythonExecutable(), "-m", module};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(pair[0]);
    close(pair[1]);
    return Status::MachineError(std::string("fork: ") + strerror(err));
  }
  if (pid == 0) {
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
    }
    if (dup2(pair[1], 3) < 0) _exit(127);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(pair[1]);
  PythonPeer peer;
  peer.pid = pid;
  peer.sock = pair[0];
  pollfd p = {peer.sock, POLLIN, 0};
  peer.hello = poll(&p, 1, static_cast<int>(timeout.count())) > 0 ? ReceiveUnixMessage(peer.sock) : "";
  if (peer.hello.empty()) {
    StopPythonPeer(peer);
    return Status::MachineError("it ended or said nothing within " + std::to_string(timeout.count() / 1000) + " s");
  }
  return peer;
}

void StopPythonPeer(PythonPeer& peer) {
  if (peer.pid > 0) {
    kill(peer.pid, SIGKILL);
    waitpid(peer.pid, nullptr, 0);
    peer.pid = -1;
  }
  if (peer.sock >= 0) {
    close(peer.sock);
    peer.sock = -1;
  }
}

}  // namespace anvil
