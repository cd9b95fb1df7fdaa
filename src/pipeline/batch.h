// Many candidates in one run: which (task, candidate) pairs to evaluate — a
// folder, a JSONL list, or the bundled examples — and running them with a
// progress callback. Each job ends in exactly one verdict; a task that cannot
// be prepared gives its candidates infra_error verdicts naming the problem and
// the run goes on. Not thread-safe: one Batch per run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "pipeline/evaluator.h"
#include "tasks/task.h"

namespace anvil {

struct Job {
  Task task;
  std::filesystem::path candidate;
  std::string expected;  // From an `anvil-expect: <status>` header line; "" if none.
};

// The `anvil-expect:` status written in a candidate's header, or "".
std::string ExpectedStatus(const std::filesystem::path& candidate);

// Candidate files in a folder (.py, .cpp, .cc, .cu; sorted; not recursive).
std::vector<std::filesystem::path> CandidateFiles(const std::filesystem::path& dir);

// Jobs for `candidates` (files or folders) against one task.
Result<std::vector<Job>> JobsForTask(const Task& task, const std::vector<std::filesystem::path>& candidates);

// Jobs matching a task tree with a candidate tree: candidates for task NAME
// live in <candidates>/NAME/ (any depth of the task tree).
Result<std::vector<Job>> JobsForTree(const std::filesystem::path& tasks, const std::filesystem::path& candidates);

// Jobs from a JSONL file of {"task": path, "candidate": path} (relative paths
// resolve against the file's folder).
Result<std::vector<Job>> JobsFromList(const std::filesystem::path& jsonl);

struct Progress {
  std::size_t done = 0;
  std::size_t total = 0;
  double elapsed_seconds = 0;
};

// How a batch spreads its jobs. `parallel` evaluations run candidates on each
// device at once (correctness runs share it; the evaluator's DeviceGate keeps
// timed runs alone), and three times as many more wait there for their timed
// calls. With `compile_ahead`, at most that many extract and compile at once,
// node-wide (pipeline/slots.h), and as many built ones wait for a run, so the
// CPUs build later candidates while the devices run earlier ones. 0: no more in flight
// than `parallel` per device, and compiles are not limited.
struct BatchOptions {
  int parallel = 1;
  int compile_ahead = 0;
};

// Places in one device's timing queue: candidates whose trials passed wait
// there for their timed calls, alive and holding their memory on the device,
// without a run slot. Three per run slot (`parallel`); on a device with less
// memory (`device_bytes`), one per kTimingQueueBytesPerPlace of it, and none
// below that: a candidate then waits for its timed calls in its run slot.
inline constexpr int kTimingQueuePerRunSlot = 3;
inline constexpr std::uint64_t kTimingQueueBytesPerPlace = std::uint64_t{16} << 30;
int TimingQueuePlaces(std::optional<std::uint64_t> device_bytes, int parallel);

// Runs every job. `on_verdict` is called in job order, from one thread at a
// time; verdicts come back in job order.
std::vector<Verdict> RunJobs(Evaluator& evaluator, const std::vector<Job>& jobs, const BatchOptions& options,
                             const std::function<void(const Job&, const Verdict&, const Progress&)>& on_verdict);
// The same over several devices: one evaluator per GPU (Backend::OnDevice),
// `parallel` run slots on each; a job goes to whichever evaluation slot is
// free first.
std::vector<Verdict> RunJobs(const std::vector<Evaluator*>& evaluators, const std::vector<Job>& jobs,
                             const BatchOptions& options,
                             const std::function<void(const Job&, const Verdict&, const Progress&)>& on_verdict);

}  // namespace anvil
