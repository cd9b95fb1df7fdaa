// The task server (python/anvil_py/task_server.py; docs/protocol.md, "trial
// data"): the trusted process that makes a task's trial inputs from their
// secret seeds and hands each candidate run copies of them as sealed memfds,
// on a socket pair whose other end the candidate worker inherits — no file
// and no address. One per device, a child of this anvil process, started on
// first use and ending with it; it keeps tasks' inputs warm across candidates
// within a memory budget (least recently used first out). Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "core/memory_room.h"
#include "core/status.h"
#include "tasks/prepare.h"
#include "tasks/task.h"

namespace anvil {

// A session whose trials' outputs come back to the server, which compares
// them with the reference's there (docs/protocol.md, "comparing sessions").
struct TrialCompare {
  int init_seed = 42;
  bool reference_tf32 = false;
  // (atol, rtol) by dtype name ("float32", ...); a dtype not listed is exact.
  std::map<std::string, std::pair<double, double>> tolerance;
  bool nan_equal = true;
  std::map<std::string, double> atol_scale;  // By output name: its atol's factor.
  // Held-out sets (catalog C1) the server serves and compares too, made from
  // the recipes in the prepared folder's kept_held_out_sets.json (0: none).
  int held_out = 0;
};

// The input sets of a session's timed calls (docs/protocol.md, "timed
// sets"): the prepared task's timing sets or its first trials' inputs. With
// `write`, the worker gets empty buffers of its own for each timed call, and
// the server writes the call's set into them only when anvil asks
// (Session::WriteCall), after the worker said `ready` for that call;
// otherwise copies of the sets.
struct TimedSets {
  std::string from = "trials";  // "timing" | "trials"
  int count = 0;
  bool write = false;
};

// A baseline the server times (docs/protocol.md, "baselines"), as far as
// it has gone: set up (its id; torch.compile's first call, in seconds), then
// timed. `failed`: the reference itself could not run (or compile) there, a
// fact of the task as the baseline worker reports it; the server's own
// failures are error statuses instead.
struct ServerBaseline {
  uint64_t id = 0;
  double compile_seconds = 0;
  int compile_graphs = -1;  // The graphs dynamo compiled at the set-up ("compile"; -1: not said).
  std::vector<double> times_ms;
  std::string failed;
  // Where the server's time went, by phase: its reply's object as it came
  // ("task", "inputs", "dynamo" at the set-up; "calls", "reset", "release",
  // "give_back" when timed), read by MeasureBaseline (docs/verdict.md).
  nlohmann::json phases_ms = nlohmann::json::object();
};

// What the server did for one candidate run.
struct TrialSessionEnd {
  std::vector<int> served;      // Trials whose inputs it sent, in order.
  std::string error;            // Its own failure (anvil's, never the candidate's); "" if none.
  std::string candidate_error;  // How the candidate broke the protocol; "" if it did not.
  // A comparing session's "results" and "after_return" (docs/protocol.md).
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json held_out = nlohmann::json::array();  // The held-out sets' results, like `results`.
  // The rechecked timed sets' results (Session::Recheck), like `results`,
  // each "trial" the set's index.
  nlohmann::json rechecks = nlohmann::json::array();
  std::vector<std::string> after_return;
  // The device's work for this session (making trials, the reference,
  // comparing): CUDA events around each piece, on the cpu its time.
  double work_ms = 0;
  // What it waited for the task code another request ran there (another
  // task's preparation or trials, torch.compile's compile of a baseline).
  double waited_ms = 0;
};

class TaskServer : public std::enable_shared_from_this<TaskServer> {
 public:
  // One candidate run's access to its task's trials.
  class Session {
   public:
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    // The candidate worker's end (pass it as --data-fd); valid until Close.
    int candidate_fd() const { return candidate_fd_; }
    // Call once the candidate's processes have ended: closes its end and says
    // what was served. Error when the server died meanwhile (anvil's failure).
    Result<TrialSessionEnd> Close();
    // What it has compared so far (a comparing session; `served` and the
    // errors as Close's), while the candidate still runs.
    Result<TrialSessionEnd> Results();
    // Has the server write timed call `call`'s input set into the buffers
    // the candidate took for that call (a session whose TimedSets write). A
    // machine error is anvil's; any other, the candidate's (its worker never
    // took them).
    Status WriteCall(int call);
    // Tells the server the recheck's seed (after the last timed call, before
    // the worker hears it; a session with TimedSets): the worker then hands
    // the picked sets' last outputs to the server, which compares them
    // (TrialSessionEnd::rechecks). Every error is anvil's.
    Status Recheck(uint64_t seed, int sample);

   private:
    friend class TaskServer;
    Session(std::shared_ptr<TaskServer> server, uint64_t id, int candidate_fd)
        : server_(std::move(server)), id_(id), candidate_fd_(candidate_fd) {}
    std::shared_ptr<TaskServer> server_;
    uint64_t id_;
    int candidate_fd_;
    bool closed_ = false;
  };

  // The server of `backend`'s device, started now if none runs (or the last
  // one died). `budget_bytes` 0: half the device's free memory at its start.
  // Error when it cannot start (the message says why).
  static Result<std::shared_ptr<TaskServer>> For(const Backend& backend, int64_t budget_bytes = 0);
  ~TaskServer();
  TaskServer(const TaskServer&) = delete;
  TaskServer& operator=(const TaskServer&) = delete;

  // Opens a session for a candidate run of `task`, whose trial seeds are
  // `prepared.seeds`; returns once the server holds the task's inputs (made
  // now or kept from before). Error (anvil's) when the task fails there or
  // the server is gone.
  Result<std::unique_ptr<Session>> Open(const Task& task, const PreparedTask& prepared,
                                        const TrialCompare* compare = nullptr, const TimedSets* sets = nullptr);
  // Sets up a baseline of `task` (mode "eager" or "compile"): the reference
  // the server keeps for comparing sessions of `compare`'s settings, on a
  // copy of trial 0's inputs, compiled and called once for "compile". Its
  // timed calls wait for TimeBaseline, which ends it; call that once for
  // every baseline set up (it is the one holding the server's memory).
  Result<ServerBaseline> SetUpBaseline(const Task& task, const PreparedTask& prepared, const TrialCompare& compare,
                                       const std::string& mode, std::chrono::milliseconds deadline);
  // The warmup and timed calls of baseline `id` (anvil has the device alone).
  Result<ServerBaseline> TimeBaseline(uint64_t id, int warmup, int iters, std::chrono::milliseconds deadline);
  // The server's counts as JSON text: loads, hits, evictions,
  // made_on_request, tasks, kept_bytes, budget_bytes.
  Result<std::string> Stats();
  pid_t pid() const { return pid_; }
  bool alive();
  // Whether a session of a task whose trials take `trial_bytes` each (inputs
  // and outputs) fits the server's budget: the server needs `session_room`
  // trials' bytes and a margin for one (its hello says both, and the budget).
  // One that does not is run with the device alone (Evaluator): beside another
  // session or a preparation the device would refuse it memory mid-run.
  bool SessionFits(int64_t trial_bytes) const;
  // Room in the server's budget (core/memory_room.h) for what a session of
  // such a task holds there (as SessionFits counts it), or a baseline (two
  // trials' bytes and the margin: its inputs, its outputs, the reference's own
  // tensors). Taken before the device is (no device hold is kept while it
  // waits) and held until the session closes or the baseline is timed: those
  // that fit the budget together run side by side, the others one after
  // another. None on the cpu backend, where the budget is the kept tasks'
  // alone (docs/protocol.md).
  RoomHold ReserveSession(int64_t trial_bytes);
  RoomHold ReserveBaseline(int64_t trial_bytes);
  // The bytes each reserves (beyond the budget: the budget and one).
  int64_t SessionBytes(int64_t trial_bytes) const;
  int64_t BaselineBytes(int64_t trial_bytes) const;

 private:
  TaskServer() = default;
  static Result<std::shared_ptr<TaskServer>> Start(const Backend& backend, int64_t budget_bytes);
  void ReadLoop();
  // Sends `request` (its "id" set here) with `fds` and waits for the reply;
  // with a `deadline`, that long at most: then the server is stopped (a
  // server that cannot answer holds what every session needs; the next
  // candidate starts another) and the error says so.
  Result<nlohmann::json> Ask(nlohmann::json request, const std::vector<int>& fds,
                             std::chrono::milliseconds deadline = std::chrono::milliseconds::zero());
  // The fields of `open` and `baseline` that name the task and its reference.
  static nlohmann::json TaskRequest(const Task& task, const PreparedTask& prepared, const TrialCompare* compare);
  Result<TrialSessionEnd> SessionReport(const std::string& op, uint64_t id);

  int sock_ = -1;
  pid_t pid_ = -1;
  int64_t budget_bytes_ = 0;          // From its hello: 0 when it did not say.
  int64_t session_room_ = 0;          // Trials' bytes a session needs, in trials.
  int64_t session_margin_ = 0;        // And bytes beside them.
  std::shared_ptr<MemoryRoom> room_;  // On a GPU with a budget; else null.
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool alive_ = false;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::string> replies_;
};

}  // namespace anvil
