#include "core/zygote.h"

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

#include "core/python_peer.h"
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
  // The allowed part of anvil's environment only (core/child_env.h): its
  // children are forks, and a fork's /proc/self/environ shows the zygote's.
  // The zygote ends when its socket does (anvil exited or died), and its
  // children die with it. Its first message says it is ready (its imports
  // are done), or why not: {"ready": false, "error": "..."} (no quotes inside).
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(kStartTimeout);
  auto started = StartPythonPeer("anvil_py.zygote", {library.string()}, {}, ms);
  const bool ready = started.ok() && started.value().hello.find("\"ready\": true") != std::string::npos;
  if (!ready) {
    std::string why = started.ok() ? "" : " (" + started.message() + ")";
    if (started.ok()) {
      const std::string& hello = started.value().hello;
      const std::string key = "\"error\": \"";
      if (const auto at = hello.find(key); at != std::string::npos) {
        const auto from = at + key.size();
        why = " (" + hello.substr(from, hello.find('"', from) - from) + ")";
      }
      StopPythonPeer(started.value());
    }
    std::fprintf(stderr, "anvil: the Python zygote did not start%s: Python workers are started one by one (slower)\n",
                 why.c_str());
    return nullptr;
  }
  std::unique_ptr<Zygote> z(new Zygote());
  z->sock_ = started.value().sock;
  z->pid_ = started.value().pid;
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
