#include "core/zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/child_env.h"
#include "core/environment.h"
#include "core/subprocess.h"
#include "core/unix_message.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(120);

fs::path SandboxLibrary() {
  if (const char* env = std::getenv("ANVIL_SANDBOX_LIB"); env != nullptr) return env;
  std::error_code ec;
  return fs::read_symlink("/proc/self/exe", ec).parent_path() / "libanvil_sandbox.so";
}

}  // namespace

Zygote* Zygote::Shared() {
  static std::mutex mu;
  static std::unique_ptr<Zygote> zygote;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mu);
  if (zygote) {
    std::lock_guard<std::mutex> state(zygote->mu_);
    if (zygote->alive_) return zygote.get();
  }
  if (tried) return nullptr;  // Once dead or failed, workers are exec'd (said on stderr already).
  tried = true;
  const char* env = std::getenv("ANVIL_ZYGOTE");
  if (env != nullptr && std::string(env) == "0") return nullptr;
  zygote = Start();
  return zygote.get();
}

std::unique_ptr<Zygote> Zygote::Start() {
  const fs::path library = SandboxLibrary();
  std::error_code ec;
  if (!fs::exists(library, ec)) {
    std::fprintf(stderr, "anvil: no %s: Python workers are started one by one (slower)\n", library.c_str());
    return nullptr;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return nullptr;
  // The allowed part of anvil's environment only (core/child_env.h): its
  // children are forks, and a fork's /proc/self/environ shows the zygote's.
  // PYTHONSAFEPATH: the working folder (a candidate's scratch) is not an import path.
  std::vector<std::string> env_strings = EnvStrings(ChildEnvironment({{"PYTHONSAFEPATH", "1"},
                                                                      {"PYTHONDONTWRITEBYTECODE", "1"},
                                                                      {"PYTHONUNBUFFERED", "1"},
                                                                      {"PYTHONWARNINGS", "ignore"},
                                                                      {"PYTHONPATH", PythonPackageDir().string()}}));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string python = PythonExecutable(), dash_m = "-m", module = "anvil_py.zygote", lib = library.string();
  std::vector<char*> argv = {python.data(), dash_m.data(), module.data(), lib.data(), nullptr};
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(pair[0]);
    close(pair[1]);
    return nullptr;
  }
  if (pid == 0) {
    // No PR_SET_PDEATHSIG: it follows the thread that forked (any worker
    // thread of anvil's), not the process. The zygote ends when its socket
    // does (anvil exited or died), and its children die with it.
    if (getppid() != parent) _exit(127);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);  // anvil's stdout is its verdicts.
    }
    if (dup2(pair[1], 3) < 0) _exit(127);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(pair[1]);
  std::unique_ptr<Zygote> z(new Zygote());
  z->sock_ = pair[0];
  z->pid_ = pid;
  // The first message says it is ready (its imports are done).
  pollfd p = {z->sock_, POLLIN, 0};
  const int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(kStartTimeout).count());
  std::string hello = poll(&p, 1, ms) > 0 ? ReceiveUnixMessage(z->sock_) : "";
  if (hello.find("\"ready\": true") == std::string::npos) {
    // {"ready": false, "error": "..."}: why it refused (no quotes inside).
    std::string why;
    const std::string key = "\"error\": \"";
    if (const auto at = hello.find(key); at != std::string::npos) {
      const auto from = at + key.size();
      why = " (" + hello.substr(from, hello.find('"', from) - from) + ")";
    }
    std::fprintf(stderr, "anvil: the Python zygote did not start%s: Python workers are started one by one (slower)\n",
                 why.c_str());
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(z->sock_);
    z->sock_ = -1;
    return nullptr;
  }
  z->alive_ = true;
  z->reader_ = std::thread([zp = z.get()] { zp->ReadLoop(); });
  return z;
}

Zygote::~Zygote() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = false;  // Ending it is not news.
  }
  if (sock_ >= 0) shutdown(sock_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (sock_ >= 0) close(sock_);
}

void Zygote::ReadLoop() {
  while (true) {
    std::string text = ReceiveUnixMessage(sock_);
    nlohmann::json j = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    if (text.empty()) {
      if (alive_) std::fprintf(stderr, "anvil: the Python zygote ended: Python workers are started one by one now\n");
      alive_ = false;
      cv_.notify_all();
      return;
    }
    if (!j.is_object()) continue;
    if (j.contains("exit")) {
      reaped_[j["exit"].get<pid_t>()] = j.value("status", 0);
    } else if (j.contains("id")) {
      replies_[j["id"].get<uint64_t>()] = text;
    }
    cv_.notify_all();
  }
}

Result<pid_t> Zygote::Spawn(const ProcessSpec& spec, const std::vector<std::pair<std::string, std::string>>& env,
                            int out_w, int err_w, int report_w) {
  if (spec.argv.size() < 3 || spec.argv[1] != "-m" || spec.argv[2] != spec.python_module) {
    return Status::Error("not a `python -m " + spec.python_module + "` command");
  }
  std::vector<int> fds = {out_w, err_w, report_w};
  nlohmann::json req = {{"module", spec.python_module},
                        {"args", std::vector<std::string>(spec.argv.begin() + 3, spec.argv.end())},
                        {"env", env},
                        {"cwd", spec.working_dir},
                        {"parent", getpid()},
                        {"parent_group", getpgrp()},
                        {"sandbox", nullptr},
                        {"ruleset", -1},
                        {"passed", nlohmann::json::array()}};
  if (spec.sandbox) {
    req["sandbox"] = spec.sandbox->Describe();
    if (spec.sandbox->ruleset_fd() >= 0) {
      req["ruleset"] = fds.size();
      fds.push_back(spec.sandbox->ruleset_fd());
    }
  }
  for (int fd : spec.pass_fds) {
    req["passed"].push_back(fds.size());
    fds.push_back(fd);
  }
  req["cgroups"] = nlohmann::json::array();
  if (spec.cgroup) {
    for (int fd : spec.cgroup->join_fds()) {
      req["cgroups"].push_back(fds.size());
      fds.push_back(fd);
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (!alive_) return Status::Error("the Python zygote has ended");
  const uint64_t id = next_id_++;
  req["id"] = id;
  if (!SendUnixMessage(sock_, req.dump(), fds)) return Status::Error("cannot reach the Python zygote");
  cv_.wait(lock, [&] { return replies_.count(id) > 0 || !alive_; });
  auto it = replies_.find(id);
  if (it == replies_.end()) return Status::Error("the Python zygote ended while starting a worker");
  nlohmann::json reply = nlohmann::json::parse(it->second, nullptr, false);
  replies_.erase(it);
  if (!reply.is_object() || !reply.contains("pid")) {
    return Status::Error("the Python zygote could not start a worker: " +
                         (reply.is_object() ? reply.value("error", std::string("?")) : std::string("?")));
  }
  return reply["pid"].get<pid_t>();
}

std::optional<int> Zygote::Reaped(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reaped_.find(pid);
  if (it != reaped_.end()) {
    const int status = it->second;
    reaped_.erase(it);
    return status;
  }
  if (!alive_) return SIGKILL;  // Wait status of a child killed by SIGKILL (it dies with the zygote).
  return std::nullopt;
}

}  // namespace anvil
