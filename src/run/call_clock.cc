#include "run/call_clock.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace anvil {

namespace {

// splitmix64's k-th output from `seed` (k >= 1): the draws the worker repeats
// (timing.py recheck_sample, recheck_points).
uint64_t SplitMix64(uint64_t seed, uint64_t k) {
  uint64_t z = seed + k * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

using Clock = std::chrono::steady_clock;
constexpr int kPollMs = 20;

void Pack(unsigned char* m, const char* tag, uint64_t nonce, double value) {
  std::memset(m, 0, kClockMessageBytes);
  std::memcpy(m, tag, std::min<std::size_t>(std::strlen(tag), 8));
  std::memcpy(m + 8, &nonce, 8);  // Little-endian hosts only (x86-64, aarch64).
  std::memcpy(m + 16, &value, 8);
}

bool TagIs(const unsigned char* m, const char* tag) {
  char want[8] = {};
  std::memcpy(want, tag, std::min<std::size_t>(std::strlen(tag), 8));
  return std::memcmp(m, want, 8) == 0;
}

std::string TagText(const unsigned char* m) {
  std::string s;
  for (int i = 0; i < 8 && m[i] != 0; ++i) s += std::isprint(m[i]) ? static_cast<char>(m[i]) : '?';
  return s;
}

bool Readable(int fd) {
  pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", ms);
  return buf;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Nanoseconds the thread waited on a run queue (the second field of
// /proc/.../schedstat); nullopt when unreadable.
std::optional<int64_t> RunDelayNs(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  unsigned long long cpu = 0, delay = 0;
  if (std::sscanf(buf, "%llu %llu", &cpu, &delay) != 2) return std::nullopt;
  return static_cast<int64_t>(delay);
}

}  // namespace

Result<std::unique_ptr<CallClock>> CallClock::Open() {
  std::unique_ptr<CallClock> clock(new CallClock());
  if (pipe2(clock->go_, O_CLOEXEC) != 0 || pipe2(clock->done_, O_CLOEXEC) != 0) {
    return Status::Error(std::string("cannot make the timing pipes: ") + std::strerror(errno));
  }
  return clock;
}

CallClock::~CallClock() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int fd : {go_[0], go_[1], done_[0], done_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void CallClock::Start(int calls) {
  calls_.expected = calls;
  thread_ = std::thread([this, calls] { Loop(calls, nullptr); });
}

void CallClock::StartAfterTrials(int calls, std::function<bool()> time_them, uint64_t traced) {
  calls_.expected = calls;
  calls_.traced = traced;
  thread_ = std::thread([this, calls, time_them = std::move(time_them)] { Loop(calls, time_them); });
}

ClockedCalls CallClock::Finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  // Whatever is still in the pipe was never asked for.
  if (calls_.violation.empty() && Readable(done_[0])) {
    calls_.violation = "a timing message arrived after the last call";
  }
  return calls_;
}

bool CallClock::Receive(unsigned char* message) {
  int got = 0;
  while (got < kClockMessageBytes) {
    pollfd p = {done_[0], POLLIN, 0};
    int r = poll(&p, 1, kPollMs);
    if (r < 0 && errno != EINTR) return false;
    if (r <= 0) {
      if (stop_) return false;
      continue;
    }
    ssize_t n = read(done_[0], message + got, kClockMessageBytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<int>(n);
  }
  return true;
}

void CallClock::Loop(int calls, const std::function<bool()>& time_them) {
  if (time_them) {
    unsigned char m[kClockMessageBytes];
    if (Receive(m)) {
      if (!TagIs(m, "trials")) {
        calls_.violation = "the trials were announced by '" + TagText(m) + "', not 'trials'";
      } else {
        calls_.trials_announced = true;
        if (time_them()) {
          unsigned char perf[kClockMessageBytes];
          Pack(perf, "perf", calls_.traced, calls);
          calls_.calls_started = write(go_[1], perf, sizeof perf) == static_cast<ssize_t>(sizeof perf);
        }
      }
    }
  }
  if (!time_them || calls_.calls_started) Clocked(calls);
  // No more calls: a child still waiting for one reads end-of-file and stops
  // (after a violation it would otherwise wait out its deadline).
  close(go_[1]);
  go_[1] = -1;
}

void CallClock::Clocked(int calls) {
  unsigned char m[kClockMessageBytes];
  std::mt19937_64 rng(std::random_device{}());
  // Both threads' run delay so far, or nullopt (read once the child has said
  // it is ready: by then its pid is known).
  auto queued = [&]() -> std::optional<int64_t> {
    const int pid = child_pid_ ? child_pid_->load() : 0;
    if (pid <= 0) return std::nullopt;
    char child_stat[64];
    std::snprintf(child_stat, sizeof child_stat, "/proc/%d/task/%d/schedstat", pid, pid);
    auto child = RunDelayNs(child_stat);
    auto self = RunDelayNs("/proc/thread-self/schedstat");
    if (!child || !self) return std::nullopt;
    return *child + *self;
  };
  bool queue_known = child_pid_ != nullptr;
  for (int i = 0; i < calls; ++i) {
    // The child says when its own preparation (input copy, L2 flush) is
    // done, so that only the call is inside anvil's wall time.
    if (!Receive(m)) return;  // The child stopped before this call.
    if (!TagIs(m, "ready")) {
      calls_.violation = "call " + std::to_string(i) + " was announced by '" + TagText(m) + "', not 'ready'";
      return;
    }
    if (before_go_) {
      if (Status s = before_go_(i); !s.ok()) {
        (s.machine_error() ? calls_.infra : calls_.violation) = "call " + std::to_string(i) + ": " + s.message();
        return;
      }
    }
    if (Readable(done_[0])) {
      calls_.violation = "a timing message arrived before call " + std::to_string(i) + " was started";
      return;
    }
    uint64_t nonce = rng();
    unsigned char go[kClockMessageBytes];
    Pack(go, "go", nonce, i);
    const std::optional<int64_t> queued_before = queue_known ? queued() : std::nullopt;
    const Clock::time_point t0 = Clock::now();
    if (write(go_[1], go, sizeof go) != static_cast<ssize_t>(sizeof go)) return;
    if (!Receive(m)) return;
    const double wall = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const std::optional<int64_t> queued_after = queued_before ? queued() : std::nullopt;
    queue_known = queued_after.has_value();
    uint64_t echoed;
    double event;
    std::memcpy(&echoed, m + 8, 8);
    std::memcpy(&event, m + 16, 8);
    if (!TagIs(m, "done") || echoed != nonce) {
      calls_.violation = "call " + std::to_string(i) + " was answered by a message anvil did not ask for ('" +
                         TagText(m) + "', " + (echoed == nonce ? "right" : "wrong") + " nonce)";
      return;
    }
    if (!std::isfinite(event) || event < 0) {
      calls_.violation = "call " + std::to_string(i) + " reported an impossible time";
      return;
    }
    calls_.wall_ms.push_back(wall);
    calls_.event_ms.push_back(event);
    if (queue_known) calls_.queued_ms.push_back(static_cast<double>(*queued_after - *queued_before) / 1e6);
  }
  // All calls or none: a partial record excuses nothing.
  if (calls_.queued_ms.size() != calls_.wall_ms.size()) calls_.queued_ms.clear();
  // Every call is over: only now which outputs are looked at again.
  const uint64_t seed = rng();
  if (before_recheck_) {
    if (Status s = before_recheck_(seed); !s.ok()) {
      calls_.infra = "the recheck: " + s.message();
      return;
    }
  }
  unsigned char recheck[kClockMessageBytes];
  Pack(recheck, "recheck", seed, kRecheckSample);
  calls_.recheck_sent = write(go_[1], recheck, sizeof recheck) == static_cast<ssize_t>(sizeof recheck);
  calls_.recheck_seed = seed;
}

std::vector<int64_t> RecheckPoints(int64_t n, uint64_t seed, int set, int output) {
  if (n <= kRecheckPoints) return {};
  const uint64_t base = seed ^ (static_cast<uint64_t>(set) << 32) ^ (static_cast<uint64_t>(output) << 48);
  std::vector<int64_t> points(static_cast<std::size_t>(kRecheckPoints));
  for (int64_t j = 0; j < kRecheckPoints; ++j) {
    points[static_cast<std::size_t>(j)] =
        static_cast<int64_t>(SplitMix64(base, static_cast<uint64_t>(j + 1)) % static_cast<uint64_t>(n));
  }
  return points;
}

std::vector<int> RecheckSample(int sets, int k, uint64_t seed) {
  std::vector<int> index(static_cast<std::size_t>(std::max(sets, 0)));
  for (int i = 0; i < sets; ++i) index[static_cast<std::size_t>(i)] = i;
  k = std::clamp(k, 0, std::max(sets, 0));
  for (int i = 0; i < k; ++i) {
    const uint64_t z = SplitMix64(seed, static_cast<uint64_t>(i + 1));
    const int j = i + static_cast<int>(z % static_cast<uint64_t>(sets - i));
    std::swap(index[static_cast<std::size_t>(i)], index[static_cast<std::size_t>(j)]);
  }
  index.resize(static_cast<std::size_t>(k));
  std::sort(index.begin(), index.end());
  return index;
}

namespace {

// Median per call of wall - event, less the call's wait for a CPU when
// `excuse_queued` (and every call has one).
double MedianGapMs(const ClockedCalls& calls, bool excuse_queued) {
  const bool excuse = excuse_queued && calls.queued_ms.size() == calls.wall_ms.size();
  std::vector<double> gap;
  for (std::size_t i = 0; i < calls.wall_ms.size() && i < calls.event_ms.size(); ++i) {
    gap.push_back(calls.wall_ms[i] - calls.event_ms[i] - (excuse ? calls.queued_ms[i] : 0));
  }
  return Median(gap);
}

}  // namespace

double MedianUntimedMs(const ClockedCalls& calls) { return MedianGapMs(calls, false); }

std::vector<double> CpuCallTimes(const ClockedCalls& calls) {
  std::vector<double> times;
  const bool queued = calls.queued_ms.size() == calls.wall_ms.size();
  for (std::size_t i = 0; i < calls.event_ms.size(); ++i) {
    double t = calls.event_ms[i];
    if (i < calls.wall_ms.size()) {
      t = std::max(t, calls.wall_ms[i] - (queued ? calls.queued_ms[i] : 0.0) - kCpuRoundTripMs);
    }
    times.push_back(t);
  }
  return times;
}

std::optional<ClockFinding> JudgeClock(const ClockedCalls& calls, double hidden_floor_ms, bool excuse_queued) {
  if (!calls.violation.empty()) {
    return ClockFinding{"perf.clock", "the timing channel was tampered with: " + calls.violation};
  }
  for (std::size_t i = 0; i < calls.wall_ms.size(); ++i) {
    const double wall = calls.wall_ms[i], event = calls.event_ms[i];
    if (event > wall * 1.01 + kClockToleranceMs) {
      return ClockFinding{"perf.clock", "call " + std::to_string(i) + " reported " + Ms(event) + ", but it took " +
                                            Ms(wall) + " from start to end as anvil measured it: the time was forged"};
    }
  }
  const bool excuse = excuse_queued && calls.queued_ms.size() == calls.wall_ms.size();
  const double untimed = MedianGapMs(calls, excuse);
  const double timed = Median(calls.event_ms);
  // Honest calls leave a constant ~0.1-0.3 ms outside their events (the
  // channel, the synchronize); a third of the call is not that.
  if (untimed > hidden_floor_ms && untimed * 2 > timed) {
    return ClockFinding{"perf.hidden_time",
                        "each timed call took " + Ms(timed + untimed) + " as anvil measured it (median" +
                            (excuse ? ", less the time it waited for a CPU" : "") + "), but only " + Ms(timed) +
                            " of it was inside the timing events: work ran where the events do not see "
                            "it (a side stream, a thread) or the times were forged"};
  }
  return std::nullopt;
}

}  // namespace anvil
