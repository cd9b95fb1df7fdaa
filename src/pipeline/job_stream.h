// Jobs judged as they come: a pool of evaluation threads over one evaluator
// per device, taking jobs from a queue that stays open while a producer (the
// model loop) still adds to it. Each job's verdict is handed to its own
// callback as soon as it is made, on the thread that made it, in whatever
// order the jobs finish. The lanes (compile slots, run slots, timing queues)
// are those of pipeline/batch.h. Submit is thread-safe; Finish waits for
// every job submitted before it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pipeline/batch.h"
#include "pipeline/slots.h"

namespace anvil {

class JobStream {
 public:
  using OnVerdict = std::function<void(const Job&, Verdict)>;

  JobStream(std::vector<Evaluator*> evaluators, const BatchOptions& options);
  ~JobStream();  // Finishes.
  JobStream(const JobStream&) = delete;
  JobStream& operator=(const JobStream&) = delete;

  // Queues `job`; `on_verdict` gets its verdict. Not after Finish.
  void Submit(Job job, OnVerdict on_verdict);
  // What a job may ask beyond the stream's defaults.
  struct Hooks {
    // Judged by these (one per device, in the stream's device order: e.g.
    // those of another policy, sharing the devices' gates) instead of the
    // stream's own.
    std::vector<Evaluator*> evaluators;
    // Asked when an evaluation thread takes the job: false drops it (a
    // cancelled job), and `on_dropped` is called instead of `on_verdict`.
    std::function<bool()> wanted;
    std::function<void()> on_dropped;
  };
  void Submit(Job job, OnVerdict on_verdict, Hooks hooks);

  // What the stream holds now: jobs no evaluation thread has taken yet, jobs
  // being evaluated, and of those, how many hold a compile slot (node-wide;
  // 0 of 0 without lanes) and a run slot (all devices; without lanes each
  // evaluation thread is one).
  struct Use {
    std::size_t queued = 0;
    int evaluating = 0;
    int compiles = 0, compile_slots = 0;
    int runs = 0, run_slots = 0;
  };
  Use InUse();
  // Waits until every submitted job has its verdict, then stops the threads.
  void Finish();

 private:
  struct Entry {
    Job job;
    OnVerdict on_verdict;
    Hooks hooks;
  };
  void Work(int device);

  std::vector<Evaluator*> evaluators_;
  Slots compile_slots_;
  std::vector<std::unique_ptr<Slots>> run_slots_, timing_queues_;
  bool lanes_ = false;  // Whether evaluations take the lanes (compile_ahead > 0).
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;
  bool closed_ = false;
  int evaluating_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace anvil
