#include "tasks/task_server.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "core/python_peer.h"
#include "core/unix_message.h"
#include "run/device_memory.h"

namespace anvil {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(180);

std::string ServerKey(const Backend& backend) {
  std::string key = backend.TorchDevice();
  for (const auto& [name, value] : backend.ChildEnv()) key += "|" + name + "=" + value;
  return key;
}

}  // namespace

Result<std::shared_ptr<TaskServer>> TaskServer::For(const Backend& backend, int64_t budget_bytes) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<TaskServer>> servers;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = ServerKey(backend) + "|" + std::to_string(budget_bytes);
  auto it = servers.find(key);
  if (it != servers.end() && it->second->alive()) return it->second;
  auto started = Start(backend, budget_bytes);
  if (!started.ok()) return started.status();
  servers[key] = started.value();
  return started;
}

Result<std::shared_ptr<TaskServer>> TaskServer::Start(const Backend& backend, int64_t budget_bytes) {
  // It ends when its socket does (anvil exited or died).
  auto started = StartPythonPeer(
      "anvil_py.task_server",
      {"--control-fd", "3", "--device", backend.TorchDevice(), "--budget-bytes", std::to_string(budget_bytes)},
      backend.ChildEnv(), std::chrono::duration_cast<std::chrono::milliseconds>(kStartTimeout));
  const std::string failed = "the task server (python -m anvil_py.task_server) did not start: ";
  if (!started.ok()) return Status::MachineError(failed + started.message());
  PythonPeer& peer = started.value();
  nlohmann::json j = nlohmann::json::parse(peer.hello, nullptr, false);
  if (!j.is_object() || !j.value("ready", false)) {
    std::string why = j.is_object() ? j.value("error", std::string()) : std::string();
    if (why.empty()) why = "it said: " + peer.hello;
    StopPythonPeer(peer);
    return Status::MachineError(failed + why);
  }
  std::shared_ptr<TaskServer> server(new TaskServer());
  server->sock_ = peer.sock;
  server->pid_ = peer.pid;
  server->budget_bytes_ = j.value("budget_bytes", int64_t{0});
  server->session_room_ = j.value("session_room", int64_t{0});
  server->session_margin_ = j.value("session_margin", int64_t{0});
  if (backend.kind() == BackendKind::kCuda && server->budget_bytes_ > 0) {
    server->room_ = std::make_shared<MemoryRoom>(server->budget_bytes_);
  }
  server->alive_ = true;
  // Its device memory is the budget's, not another process's, up to the
  // budget and the margin (its CUDA context, torch's rounding): beyond them
  // a candidate whose device ran out did not run out by its own doing.
  PlanDeviceProcess(
      peer.pid, true,
      server->budget_bytes_ > 0
          ? static_cast<std::uint64_t>(server->budget_bytes_ + std::max<int64_t>(server->session_margin_, 0))
          : 0);
  server->reader_ = std::thread([s = server.get()] { s->ReadLoop(); });
  return server;
}

TaskServer::~TaskServer() {
  const pid_t planned = pid_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    alive_ = false;
  }
  if (sock_ >= 0) shutdown(sock_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
  if (pid_ > 0) {
    // Its socket has closed: it ends on its own; SIGKILL if it does not soon.
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(20000);
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  if (planned > 0) PlanDeviceProcess(planned, false);
  if (sock_ >= 0) close(sock_);
}

bool TaskServer::SessionFits(int64_t trial_bytes) const {
  if (budget_bytes_ <= 0 || trial_bytes <= 0) return true;
  // Divided, not multiplied: no overflow for any size.
  const int64_t room = budget_bytes_ - session_margin_;
  return room > 0 && (session_room_ <= 0 || trial_bytes <= room / session_room_);
}

int64_t TaskServer::SessionBytes(int64_t trial_bytes) const {
  const int64_t trials = std::max<int64_t>(session_room_, 1);
  const int64_t bytes = std::max<int64_t>(trial_bytes, 0);
  // Saturated: a count beyond the budget waits for the room to empty all the same.
  return bytes > budget_bytes_ / trials ? budget_bytes_ + 1 : trials * bytes + session_margin_;
}

int64_t TaskServer::BaselineBytes(int64_t trial_bytes) const {
  const int64_t bytes = std::max<int64_t>(trial_bytes, 0);
  return bytes > budget_bytes_ / 2 ? budget_bytes_ + 1 : 2 * bytes + session_margin_;
}

RoomHold TaskServer::ReserveSession(int64_t trial_bytes) { return RoomHold(room_, SessionBytes(trial_bytes)); }

RoomHold TaskServer::ReserveBaseline(int64_t trial_bytes) { return RoomHold(room_, BaselineBytes(trial_bytes)); }

bool TaskServer::alive() {
  std::lock_guard<std::mutex> lock(mu_);
  return alive_;
}

void TaskServer::ReadLoop() {
  while (true) {
    std::string text = ReceiveUnixMessage(sock_);
    nlohmann::json j = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
    std::lock_guard<std::mutex> lock(mu_);
    if (text.empty()) {
      alive_ = false;
      cv_.notify_all();
      return;
    }
    if (j.is_object() && j.contains("id") && j["id"].is_number_unsigned()) {
      replies_[j["id"].get<uint64_t>()] = std::move(text);
      cv_.notify_all();
    }
  }
}

Result<nlohmann::json> TaskServer::Ask(nlohmann::json request, const std::vector<int>& fds,
                                       std::chrono::milliseconds deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!alive_) return Status::MachineError("anvil's task server has ended");
  const uint64_t id = next_id_++;
  request["id"] = id;
  if (!SendUnixMessage(sock_, request.dump(), fds)) return Status::MachineError("cannot reach anvil's task server");
  auto answered = [&] { return replies_.count(id) > 0 || !alive_; };
  if (deadline > std::chrono::milliseconds::zero()) {
    if (!cv_.wait_for(lock, deadline, answered)) {
      kill(pid_, SIGKILL);  // Its socket closes: the reader marks it ended, and For starts another.
      return Status::MachineError("anvil's task server did not answer '" + request.value("op", std::string()) +
                                  "' within " + std::to_string(deadline.count() / 1000) +
                                  " s and was stopped (the next candidate starts another)");
    }
  } else {
    cv_.wait(lock, answered);
  }
  auto it = replies_.find(id);
  if (it == replies_.end()) return Status::MachineError("anvil's task server ended while it was asked");
  nlohmann::json reply = nlohmann::json::parse(it->second, nullptr, false);
  replies_.erase(it);
  if (!reply.is_object()) return Status::MachineError("anvil's task server answered garbage");
  return reply;
}

nlohmann::json TaskServer::TaskRequest(const Task& task, const PreparedTask& prepared, const TrialCompare* compare) {
  nlohmann::json request = {
      {"task", task.path.string()}, {"prepared", prepared.dir.string()}, {"seeds", prepared.seeds}};
  if (compare != nullptr) {
    request["compare"] = true;
    request["init_seed"] = compare->init_seed;
    request["tf32"] = compare->reference_tf32 ? "default" : "off";
    request["tolerance"] = nlohmann::json::object();
    for (const auto& [dtype, tol] : compare->tolerance) request["tolerance"][dtype] = {tol.first, tol.second};
    request["nan_equal"] = compare->nan_equal;
    request["atol_scale"] = compare->atol_scale;
    request["held_out"] = compare->held_out;
  }
  // Where no timing set is on the disk the server makes each from its seed.
  if (!prepared.timing_seeds.empty()) request["timing_seeds"] = prepared.timing_seeds;
  return request;
}

Result<std::unique_ptr<TaskServer::Session>> TaskServer::Open(const Task& task, const PreparedTask& prepared,
                                                              const TrialCompare* compare, const TimedSets* sets) {
  if (prepared.seeds.empty()) return Status::Error("task " + task.name + ": its trial seeds are not known");
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::MachineError(std::string("a trial data socket pair: ") + strerror(errno));
  }
  // The server's end goes to it; ours stays only until the session is open.
  nlohmann::json request = TaskRequest(task, prepared, compare);
  request["op"] = "open";
  if (sets != nullptr && sets->count > 0) {
    request["sets"] = {{"from", sets->from}, {"count", sets->count}, {"write", sets->write}};
  }
  auto reply = Ask(request, {pair[1]});
  close(pair[1]);
  if (!reply.ok() || !reply.value().value("ok", false)) {
    close(pair[0]);
    if (!reply.ok()) return reply.status();
    return Status::MachineError("task " + task.name + ": anvil's task server could not make its trials: " +
                                reply.value().value("error", std::string("?")));
  }
  return std::unique_ptr<Session>(new Session(shared_from_this(), reply.value()["id"].get<uint64_t>(), pair[0]));
}

Result<TrialSessionEnd> TaskServer::SessionReport(const std::string& op, uint64_t id) {
  auto reply = Ask({{"op", op}, {"session", id}}, {});
  if (!reply.ok()) return reply.status();
  const nlohmann::json& j = reply.value();
  if (!j.contains("served")) {
    return Status::MachineError("anvil's task server: " + j.value("error", std::string("no report of the session")));
  }
  TrialSessionEnd end;
  if (j["served"].is_array()) {
    for (const auto& k : j["served"]) {
      if (k.is_number_integer()) end.served.push_back(k.get<int>());
    }
  }
  end.error = j.value("error", std::string());
  end.candidate_error = j.value("candidate_error", std::string());
  if (j.contains("results") && j["results"].is_array()) end.results = j["results"];
  if (j.contains("held_out") && j["held_out"].is_array()) end.held_out = j["held_out"];
  if (j.contains("rechecks") && j["rechecks"].is_array()) end.rechecks = j["rechecks"];
  if (j.contains("after_return") && j["after_return"].is_array()) {
    for (const auto& a : j["after_return"]) {
      if (a.is_string()) end.after_return.push_back(a.get<std::string>());
    }
  }
  if (j.contains("work_ms") && j["work_ms"].is_number()) end.work_ms = j["work_ms"].get<double>();
  if (j.contains("waited_ms") && j["waited_ms"].is_number()) end.waited_ms = j["waited_ms"].get<double>();
  return end;
}

namespace {

// A baseline reply: the reference's own failure, or what `ok` carries; any
// other is the server's error.
Result<ServerBaseline> BaselineFrom(const Result<nlohmann::json>& reply, ServerBaseline b) {
  if (!reply.ok()) return reply.status();
  const nlohmann::json& j = reply.value();
  if (j.contains("failed") && j["failed"].is_string()) {
    b.failed = j["failed"].get<std::string>();
    return b;
  }
  if (!j.value("ok", false)) {
    return Status::MachineError("anvil's task server could not time the baseline: " +
                                (j.contains("error") && j["error"].is_string()
                                     ? j["error"].get<std::string>()
                                     : std::string("it answered ") + j.dump().substr(0, 200)));
  }
  if (j.contains("baseline") && j["baseline"].is_number_unsigned()) b.id = j["baseline"].get<uint64_t>();
  if (j.contains("compile_seconds") && j["compile_seconds"].is_number()) {
    b.compile_seconds = j["compile_seconds"].get<double>();
  }
  if (j.contains("compile_graphs") && j["compile_graphs"].is_number_integer()) {
    b.compile_graphs = j["compile_graphs"].get<int>();
  }
  if (j.contains("phases_ms") && j["phases_ms"].is_object()) b.phases_ms = j["phases_ms"];
  if (j.contains("times_ms") && j["times_ms"].is_array()) {
    for (const auto& t : j["times_ms"]) {
      if (!t.is_number()) return Status::MachineError("anvil's task server answered a baseline time that is no number");
      b.times_ms.push_back(t.get<double>());
    }
  }
  return b;
}

}  // namespace

Result<ServerBaseline> TaskServer::SetUpBaseline(const Task& task, const PreparedTask& prepared,
                                                 const TrialCompare& compare, const std::string& mode,
                                                 std::chrono::milliseconds deadline) {
  if (prepared.seeds.empty()) return Status::Error("task " + task.name + ": its trial seeds are not known");
  nlohmann::json request = TaskRequest(task, prepared, &compare);
  request["op"] = "baseline";
  request["mode"] = mode;
  auto b = BaselineFrom(Ask(request, {}, deadline), {});
  if (b.ok() && b.value().failed.empty() && b.value().id == 0) {
    return Status::MachineError("anvil's task server set up a baseline without an id");
  }
  return b;
}

Result<ServerBaseline> TaskServer::TimeBaseline(uint64_t id, int warmup, int iters,
                                                std::chrono::milliseconds deadline) {
  ServerBaseline b;
  b.id = id;
  auto timed = BaselineFrom(
      Ask({{"op", "baseline_time"}, {"baseline", id}, {"warmup", warmup}, {"iters", iters}}, {}, deadline), b);
  if (timed.ok() && timed.value().failed.empty() && static_cast<int>(timed.value().times_ms.size()) != iters) {
    return Status::MachineError("anvil's task server timed " + std::to_string(timed.value().times_ms.size()) +
                                " baseline calls of " + std::to_string(iters));
  }
  return timed;
}

Result<std::string> TaskServer::Stats() {
  auto reply = Ask({{"op", "stats"}}, {});
  if (!reply.ok()) return reply.status();
  nlohmann::json j = reply.value();
  j.erase("id");
  return j.dump();
}

TaskServer::Session::~Session() {
  if (!closed_) (void)Close();
}

Result<TrialSessionEnd> TaskServer::Session::Close() {
  if (closed_) return Status::Error("the trial session was closed already");
  closed_ = true;
  close(candidate_fd_);
  candidate_fd_ = -1;
  return server_->SessionReport("close", id_);
}

Status TaskServer::Session::WriteCall(int call) {
  if (closed_) return Status::MachineError("the trial session was closed already");
  auto reply = server_->Ask({{"op", "write"}, {"session", id_}, {"call", call}}, {});
  if (!reply.ok()) return reply.status();
  const nlohmann::json& j = reply.value();
  if (j.value("ok", false)) return Status::Ok();
  if (j.contains("candidate_error")) return Status::Error(j.value("candidate_error", std::string("?")));
  return Status::MachineError("anvil's task server: " + j.value("error", std::string("no answer to write")));
}

Status TaskServer::Session::Recheck(uint64_t seed, int sample) {
  if (closed_) return Status::MachineError("the trial session was closed already");
  auto reply = server_->Ask({{"op", "recheck"}, {"session", id_}, {"seed", seed}, {"sample", sample}}, {});
  if (!reply.ok()) return Status::MachineError(reply.message());
  if (reply.value().value("ok", false)) return Status::Ok();
  return Status::MachineError("anvil's task server: " +
                              reply.value().value("error", std::string("no answer to recheck")));
}

Result<TrialSessionEnd> TaskServer::Session::Results() {
  if (closed_) return Status::Error("the trial session was closed already");
  return server_->SessionReport("results", id_);
}

}  // namespace anvil
