#include "pipeline/batch.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/files.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr int kTimingQueuePerRunSlot = 3;

constexpr std::size_t kHeaderBytes = 2048;

bool IsCandidateFile(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".py" || ext == ".cpp" || ext == ".cc" || ext == ".cu";
}

}  // namespace

std::string ExpectedStatus(const fs::path& candidate) {
  auto text = ReadFile(candidate);
  if (!text.ok()) return "";
  std::string head = text.value().substr(0, kHeaderBytes);
  auto pos = head.find("anvil-expect:");
  if (pos == std::string::npos) return "";
  pos += 13;
  while (pos < head.size() && head[pos] == ' ') ++pos;
  std::size_t end = pos;
  while (end < head.size() && (std::isalnum(static_cast<unsigned char>(head[end])) || head[end] == '_')) ++end;
  return head.substr(pos, end - pos);
}

std::vector<fs::path> CandidateFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && IsCandidateFile(e.path())) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<Job>> JobsForTask(const Task& task, const std::vector<fs::path>& candidates) {
  std::vector<Job> jobs;
  std::error_code ec;
  for (const auto& c : candidates) {
    if (fs::is_directory(c, ec)) {
      for (const auto& f : CandidateFiles(c)) jobs.push_back({task, f, ExpectedStatus(f)});
    } else if (fs::exists(c, ec)) {
      jobs.push_back({task, c, ExpectedStatus(c)});
    } else {
      return Status::Error("candidate not found: " + c.string());
    }
  }
  if (jobs.empty()) return Status::Error("no candidate files (.py, .cpp, .cc, .cu) given");
  return jobs;
}

Result<std::vector<Job>> JobsForTree(const fs::path& tasks_root, const fs::path& candidates) {
  auto tasks = DiscoverTasks(tasks_root);
  if (!tasks.ok()) return tasks.status();
  std::vector<Job> jobs;
  std::error_code ec;
  for (const auto& task : tasks.value()) {
    fs::path dir = candidates / task.name;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& f : CandidateFiles(dir)) jobs.push_back({task, f, ExpectedStatus(f)});
  }
  if (jobs.empty()) {
    return Status::Error("no candidates found: expected folders named after tasks (e.g. " +
                         (candidates / tasks.value().front().name).string() + "/) holding candidate files");
  }
  return jobs;
}

Result<std::vector<Job>> JobsFromList(const fs::path& jsonl) {
  auto text = ReadFile(jsonl);
  if (!text.ok()) return text.status();
  std::vector<Job> jobs;
  std::map<std::string, Task> tasks;
  fs::path base = jsonl.parent_path();
  std::size_t start = 0;
  int line_no = 0;
  const std::string& s = text.value();
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    std::string where = jsonl.string() + ":" + std::to_string(line_no);
    if (j.is_discarded() || !j.is_object() || !j.contains("task") || !j.contains("candidate") ||
        !j["task"].is_string() || !j["candidate"].is_string()) {
      return Status::Error(where + ": expected {\"task\": \"path\", \"candidate\": \"path\"}");
    }
    fs::path task_path = j["task"].get<std::string>();
    fs::path cand_path = j["candidate"].get<std::string>();
    if (task_path.is_relative()) task_path = base / task_path;
    if (cand_path.is_relative()) cand_path = base / cand_path;
    auto it = tasks.find(task_path.string());
    if (it == tasks.end()) {
      auto t = LoadTask(task_path);
      if (!t.ok()) return Status::Error(where + ": " + t.message());
      it = tasks.emplace(task_path.string(), t.value()).first;
    }
    jobs.push_back({it->second, cand_path, ExpectedStatus(cand_path)});
  }
  if (jobs.empty()) return Status::Error(jsonl.string() + " lists no jobs");
  return jobs;
}

int TimingQueuePlaces(std::optional<std::uint64_t> device_bytes, int parallel) {
  const int places = kTimingQueuePerRunSlot * std::max(parallel, 1);
  if (!device_bytes) return places;
  return static_cast<int>(std::min<std::uint64_t>(places, *device_bytes / kTimingQueueBytesPerPlace));
}

std::vector<Verdict> RunJobs(Evaluator& evaluator, const std::vector<Job>& jobs, const BatchOptions& options,
                             const std::function<void(const Job&, const Verdict&, const Progress&)>& on_verdict) {
  return RunJobs(std::vector<Evaluator*>{&evaluator}, jobs, options, on_verdict);
}

std::vector<Verdict> RunJobs(const std::vector<Evaluator*>& evaluators, const std::vector<Job>& jobs,
                             const BatchOptions& options,
                             const std::function<void(const Job&, const Verdict&, const Progress&)>& on_verdict) {
  const auto start = std::chrono::steady_clock::now();
  const int n = static_cast<int>(evaluators.size());
  const int parallel = std::max(options.parallel, 1);
  const int ahead = std::max(options.compile_ahead, 0);
  // With evaluations compiling ahead, each device admits `parallel` of them
  // to its runs at a time; without, there are only that many per device.
  Slots compile_slots(std::max(ahead, 1));
  std::vector<std::unique_ptr<Slots>> run_slots, timing_queues;
  for (int d = 0; d < n; ++d) {
    run_slots.push_back(std::make_unique<Slots>(parallel));
    // Three per run slot: while a hang holds the device for its deadline, the
    // candidates whose trials passed wait here, not in run slots, so that the
    // next ones (another hang among them) still run their trials. With one per
    // run slot, H200 run N waited 32 s to start its second hang, then 30 s for
    // it. Each waiting process keeps its memory on the device: a smaller
    // device gets fewer places.
    const int places = ahead > 0 ? TimingQueuePlaces(evaluators[d]->backend().DeviceMemoryBytes(), parallel) : 0;
    timing_queues.push_back(places > 0 ? std::make_unique<Slots>(places) : nullptr);
  }
  auto lanes_of = [&](int device) {
    return ahead > 0 ? Lanes{&compile_slots, run_slots[device].get(), timing_queues[device].get()} : Lanes{};
  };

  std::vector<Verdict> verdicts(jobs.size());
  std::vector<bool> finished(jobs.size(), false);
  std::mutex mu;
  std::size_t next = 0;      // The next job to start.
  std::size_t reported = 0;  // Jobs handed to on_verdict, in order.
  auto worker = [&](int device) {
    const Lanes lanes = lanes_of(device);
    while (true) {
      std::size_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next == jobs.size()) return;
        i = next++;
      }
      Verdict v = evaluators[device]->Evaluate(jobs[i].task, jobs[i].candidate, lanes);
      std::lock_guard<std::mutex> lock(mu);
      verdicts[i] = std::move(v);
      finished[i] = true;
      // Report every finished job whose predecessors are all reported.
      while (reported < jobs.size() && finished[reported]) {
        Progress p;
        p.done = reported + 1;
        p.total = jobs.size();
        p.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (on_verdict) on_verdict(jobs[reported], verdicts[reported], p);
        ++reported;
      }
    }
  };
  // Thread t works on evaluator t mod N: slots are spread over the devices.
  // In flight: each device's runs and its queue for timed calls, the compiles,
  // and as many built candidates waiting for a run: so the CPUs go on building
  // while the devices are behind (run 11 of throughput_h200.md started its
  // last compiles at 132 s of 170, the built ones holding every place).
  const int in_flight = ahead > 0 ? (2 + kTimingQueuePerRunSlot) * parallel * n + 2 * ahead : parallel * n;
  const int threads = std::clamp<int>(in_flight, 1, static_cast<int>(std::max<std::size_t>(jobs.size(), 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t % n);
  worker(0);
  for (auto& t : pool) t.join();
  return verdicts;
}

}  // namespace anvil
