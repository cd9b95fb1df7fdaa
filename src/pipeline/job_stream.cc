#include "pipeline/job_stream.h"

#include <algorithm>

namespace anvil {

JobStream::JobStream(std::vector<Evaluator*> evaluators, const BatchOptions& options)
    : evaluators_(std::move(evaluators)), compile_slots_(std::max(options.compile_ahead, 1)) {
  const int n = static_cast<int>(evaluators_.size());
  const int parallel = std::max(options.parallel, 1);
  const int ahead = std::max(options.compile_ahead, 0);
  lanes_ = ahead > 0;
  for (int d = 0; d < n; ++d) {
    run_slots_.push_back(std::make_unique<Slots>(parallel));
    // Three per run slot: while a hang holds the device for its deadline, the
    // candidates whose trials passed wait here, not in run slots, so that the
    // next ones (another hang among them) still run their trials. With one per
    // run slot, H200 run N waited 32 s to start its second hang, then 30 s for
    // it. Each waiting process keeps its memory on the device: a smaller
    // device gets fewer places.
    const int places = lanes_ ? TimingQueuePlaces(evaluators_[d]->backend().DeviceMemoryBytes(), parallel) : 0;
    timing_queues_.push_back(places > 0 ? std::make_unique<Slots>(places) : nullptr);
  }
  // Thread t works on evaluator t mod N: slots are spread over the devices.
  // In flight: each device's runs and its queue for timed calls, the compiles,
  // and as many built candidates waiting for a run: so the CPUs go on building
  // while the devices are behind (run 11 of throughput_h200.md started its
  // last compiles at 132 s of 170, the built ones holding every place).
  const int in_flight = lanes_ ? (2 + kTimingQueuePerRunSlot) * parallel * n + 2 * ahead : parallel * n;
  for (int t = 0; t < std::max(in_flight, 1) && n > 0; ++t) threads_.emplace_back(&JobStream::Work, this, t % n);
}

JobStream::~JobStream() { Finish(); }

void JobStream::Submit(Job job, OnVerdict on_verdict) { Submit(std::move(job), std::move(on_verdict), Hooks{}); }

void JobStream::Submit(Job job, OnVerdict on_verdict, Hooks hooks) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back({std::move(job), std::move(on_verdict), std::move(hooks)});
  }
  cv_.notify_one();
}

JobStream::Use JobStream::InUse() {
  Use use;
  if (lanes_) {
    use.compiles = compile_slots_.InUse();
    use.compile_slots = compile_slots_.count();
    for (auto& slots : run_slots_) {
      use.runs += slots->InUse();
      use.run_slots += slots->count();
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  use.queued = queue_.size();
  use.evaluating = evaluating_;
  if (!lanes_) {  // Each evaluation thread is a run slot.
    use.runs = evaluating_;
    use.run_slots = static_cast<int>(threads_.size());
  }
  return use;
}

void JobStream::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void JobStream::Work(int device) {
  const Lanes lanes = lanes_ ? Lanes{&compile_slots_, run_slots_[device].get(), timing_queues_[device].get()} : Lanes{};
  while (true) {
    Entry e;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Closed and drained.
      e = std::move(queue_.front());
      queue_.pop_front();
      ++evaluating_;
    }
    if (e.hooks.wanted && !e.hooks.wanted()) {
      if (e.hooks.on_dropped) e.hooks.on_dropped();
    } else {
      Evaluator* evaluator = e.hooks.evaluators.empty() ? evaluators_[device] : e.hooks.evaluators[device];
      Verdict v = evaluator->Evaluate(e.job.task, e.job.candidate, lanes);
      if (e.on_verdict) e.on_verdict(e.job, std::move(v));
    }
    std::lock_guard<std::mutex> lock(mu_);
    --evaluating_;
  }
}

}  // namespace anvil
