// The trusted half of the perf phase's clock (catalog D1, D5). Once the child
// says it is ready for a call (fd 4), anvil starts it — a "go" message with a
// fresh random nonce on the child's fd 3 — and takes the call's end from fd 4:
// the nonce back, with the time the child's CUDA events (or its CPU clock) gave. So every call also has
// a wall time measured in anvil's process, which the candidate cannot touch,
// and the times arrive on a channel that rejects anything anvil did not ask
// for. The child (python/anvil_py/timing.py) syncs the whole device before
// answering: work left running on a side stream or forged event times show up
// as wall time the events do not account for. Protocol: docs/protocol.md.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"

namespace anvil {

// One 24-byte message: an 8-byte tag ("trials", "perf", "ready", "go", "done", "recheck", NUL-padded), a
// nonce and a number (little-endian uint64, float64).
inline constexpr int kClockMessageBytes = 24;

struct ClockedCalls {
  int expected = 0;
  // StartAfterTrials: the child said its trials were written, and anvil
  // answered "perf" (the timed calls followed in the same process).
  bool trials_announced = false;
  bool calls_started = false;
  std::vector<double> wall_ms;   // Per finished call, measured by anvil.
  std::vector<double> event_ms;  // Per finished call, as the child reported it.
  // Per finished call: how long the child's main thread (where the timer
  // runs) and anvil's clock thread waited for a CPU while runnable during the
  // call (schedstat's run delay). Empty when the child's pid was not given or
  // /proc had no schedstat.
  std::vector<double> queued_ms;
  // Bit k: call k ran under the kernel trace (sent with "perf"); such calls
  // give evidence, the others the times.
  uint64_t traced = 0;
  // After the last call: the seed of the timing sets whose last output is
  // checked again (RecheckSample), sent only then ("recheck"), so that no
  // call knows whether its output will be looked at.
  bool recheck_sent = false;
  uint64_t recheck_seed = 0;
  std::string violation;  // What broke the protocol; empty when nothing did.
  // anvil's own failure between a call's ready and its go (BeforeGo): the
  // calls stopped there, and the verdict is anvil's infra_error.
  std::string infra;
};

// How many timing sets' last outputs are checked again after the timed calls.
inline constexpr int kRecheckSample = 8;

// The `k` of `sets` input sets (indexes, sorted) that the seed picks: a
// partial Fisher-Yates shuffle driven by splitmix64. The worker
// (python/anvil_py/timing.py, recheck_sample) picks the same ones.
std::vector<int> RecheckSample(int sets, int k, uint64_t seed);

// How many elements of one re-checked output are compared: a time saved by
// skipping work leaves as many wrong elements as the work it skipped, and a
// draw of 2^18 finds one wrong element in ten thousand with certainty
// (1 - 1e-4)^262144 < 1e-11), for 1 MB per float output instead of the whole.
inline constexpr int64_t kRecheckPoints = int64_t{1} << 18;

// The flat (row-major) indices of an output of `n` elements that the
// recheck compares for timing set `set`, output `output`: empty when n <=
// kRecheckPoints (all of them), else kRecheckPoints drawn from the seed by
// splitmix64. The worker (timing.py, recheck_points) draws the same.
std::vector<int64_t> RecheckPoints(int64_t n, uint64_t seed, int set, int output);

class CallClock {
 public:
  // Makes the two pipes. Error when the system has no descriptors left.
  static Result<std::unique_ptr<CallClock>> Open();
  ~CallClock();
  CallClock(const CallClock&) = delete;
  CallClock& operator=(const CallClock&) = delete;

  // The child's ends, in the order they become its fds 3 (go) and 4 (done).
  std::vector<int> ChildFds() const { return {go_[0], done_[1]}; }
  // Clocks `calls` calls on a thread of its own, once the child says ready.
  void Start(int calls);
  // The same in a child that first runs its correctness trials: once it says
  // "trials" (its outputs are written), `time_them` decides, on the clock's
  // thread and while the child waits, whether it gets its timed calls ("perf")
  // or is told to stop (its fd 3 is closed). "perf" carries `traced`, the
  // calls to run under the kernel trace (bit k: call k).
  void StartAfterTrials(int calls, std::function<bool()> time_them, uint64_t traced = 0);
  // Before Start*: where the child's pid will be once it runs
  // (ProcessSpec::started_pid), for ClockedCalls::queued_ms.
  void WatchQueue(std::shared_ptr<const std::atomic<int>> child_pid) { child_pid_ = std::move(child_pid); }
  // Before Start*: runs on the clock's thread for timed call `call` after the
  // child said "ready" and before anvil's "go" (the task server writes the
  // call's inputs then). A machine error stops the calls as anvil's failure
  // (ClockedCalls::infra); another, as the child's (a violation).
  void BeforeGo(std::function<Status(int call)> before_go) { before_go_ = std::move(before_go); }
  // Before Start*: runs on the clock's thread after the last call, with the
  // recheck's seed, before the child hears it (the task server learns which
  // sets it compares again then). An error stops there as anvil's failure
  // (ClockedCalls::infra): the child never gets its recheck.
  void BeforeRecheck(std::function<Status(uint64_t seed)> before_recheck) {
    before_recheck_ = std::move(before_recheck);
  }
  // After the child has exited: stops the clock and returns what it saw.
  ClockedCalls Finish();

 private:
  CallClock() = default;
  void Loop(int calls, const std::function<bool()>& time_them);
  void Clocked(int calls);
  // Reads one message; false when stopped first or the pipe failed.
  bool Receive(unsigned char* message);

  int go_[2] = {-1, -1};
  int done_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::shared_ptr<const std::atomic<int>> child_pid_;
  std::function<Status(int)> before_go_;
  std::function<Status(uint64_t)> before_recheck_;
  ClockedCalls calls_;
};

// A verdict-changing finding about the timed calls, if any.
struct ClockFinding {
  std::string rule;  // "perf.clock" | "perf.hidden_time"
  std::string message;
};

// Per call, the reported time may exceed anvil's wall time by no more than
// this (scheduling jitter between the two clocks).
inline constexpr double kClockToleranceMs = 0.05;
// Median wall time per call that the events do not account for, above which
// the candidate is hiding work: more than the floor AND more than the timed
// time itself. An honest call leaves tens of microseconds (a sync and a pipe
// round trip); the CPU floor is higher because a busy shared CPU delays the
// clock's wake-ups, and a CPU has no asynchronous work to hide there anyway.
inline constexpr double kHiddenFloorMsDevice = 0.5;
inline constexpr double kHiddenFloorMsCpu = 5.0;

// Judges a finished clock: a protocol violation, a call reported as longer
// than anvil saw it take, or hidden time. nullopt when the times stand.
// `excuse_queued` (the cpu backend): a call's wall time less the time its two
// threads waited for a CPU (queued_ms) is what the events must account for.
// On an oversubscribed machine that wait is most of what honest calls leave
// outside their events; a thread that waits for a CPU runs no hidden work.
// Not on a GPU, whose hidden work is the device's, not the host thread's.
std::optional<ClockFinding> JudgeClock(const ClockedCalls& calls, double hidden_floor_ms, bool excuse_queued = false);

// Median of wall - event over the calls (0 when none): the verdict records it.
double MedianUntimedMs(const ClockedCalls& calls);

// What an honest CPU call leaves outside its own clock at most: anvil's go and
// the child's done through two pipes (about 0.04 ms measured), with room.
inline constexpr double kCpuRoundTripMs = 0.1;

// The times CPU calls are credited with: each call's own time, but never less
// than anvil's wall time for it less the time its threads waited for a CPU
// and the round trip. On a CPU the candidate's clock runs in its own process,
// where native code could slow it down (a forged clock rewritten through the
// timer's memory); anvil's clock it cannot touch.
std::vector<double> CpuCallTimes(const ClockedCalls& calls);

}  // namespace anvil
