#include "pipeline/batch.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "pipeline/job_stream.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

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
  std::vector<Verdict> verdicts(jobs.size());
  std::vector<bool> finished(jobs.size(), false);
  std::mutex mu;
  std::size_t reported = 0;  // Jobs handed to on_verdict, in order.
  JobStream stream(evaluators, options);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    stream.Submit(jobs[i], [&, i](const Job&, Verdict v) {
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
    });
  }
  stream.Finish();
  return verdicts;
}

}  // namespace anvil
