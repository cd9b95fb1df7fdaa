#include "bench/throughput.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "core/files.h"
#include "core/fixed.h"
#include "core/python.h"
#include "core/subprocess.h"
#include "pipeline/evaluator.h"

namespace anvil {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// nvidia-smi's utilization of the first `gpus` GPUs, every ~0.5 s, while alive.
class GpuSampler {
 public:
  GpuSampler(const Backend& backend, int gpus) {
    if (backend.kind() != BackendKind::kCuda || !backend.HasDevice()) return;
    thread_ = std::thread([this, gpus] {
      while (!stop_) {
        ProcessSpec spec;
        spec.argv = {"nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"};
        spec.deadline = std::chrono::seconds(10);
        auto r = RunProcess(spec);
        if (r.ok() && r.value().Succeeded()) {
          std::istringstream in(r.value().out);
          std::string line;
          for (int g = 0; g < gpus && std::getline(in, line); ++g) {
            std::lock_guard<std::mutex> lock(mu_);
            samples_.push_back(std::atof(line.c_str()) / 100.0);
          }
        }
        for (int i = 0; i < 5 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  ~GpuSampler() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  void Fill(BenchPass& pass) {
    Stop();
    std::lock_guard<std::mutex> lock(mu_);
    if (samples_.empty()) return;
    double sum = 0;
    int zero = 0;
    for (double s : samples_) {
      sum += s;
      zero += s <= 0 ? 1 : 0;
    }
    pass.gpu_busy = sum / samples_.size();
    pass.gpu_idle = static_cast<double>(zero) / samples_.size();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<double> samples_;
};

BenchPass Pass(const std::string& name, double seconds, int candidates) {
  BenchPass p;
  p.name = name;
  p.seconds = seconds;
  p.candidates = candidates;
  p.verdicts_per_hour = seconds > 0 ? candidates * 3600.0 / seconds : 0;
  return p;
}

StockOutcome RunStock(const Job& job, const Backend& backend, const ThroughputOptions& o, const fs::path& build) {
  StockOutcome s;
  s.ran = true;
  std::error_code ec;
  fs::create_directories(build, ec);
  ProcessSpec spec = PythonWorkerSpec(
      "stock_path", {"--task", job.task.path.string(), "--candidate", job.candidate.string(), "--device",
                     backend.TorchDevice(), "--build-dir", build.string(), "--trials", std::to_string(o.stock_trials),
                     "--warmup", std::to_string(o.stock_warmup), "--iters", std::to_string(o.stock_iters)});
  spec.python_module.clear();  // A fresh interpreter per candidate, never the zygote: that is the stock path.
  spec.deadline = o.stock_deadline;
  for (auto& kv : backend.ChildEnv()) spec.env.push_back(std::move(kv));
  const auto start = Clock::now();
  auto r = RunProcess(spec);
  s.seconds = Since(start);
  if (!r.ok()) {
    s.error = r.message();
    return s;
  }
  if (r.value().timed_out) {
    s.error = "timed out";
    return s;
  }
  const std::string& out = r.value().out;
  const auto brace = out.rfind("\n{");
  json j = json::parse(brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  if (!j.is_object()) {
    s.error = "no result (" + r.value().Describe() + "): " + TailLines(r.value().err, 3);
    return s;
  }
  s.compiled = j.value("compiled", false);
  s.correct = j.value("correct", false);
  if (j.contains("runtime_ms") && j["runtime_ms"].is_number()) s.runtime_ms = j["runtime_ms"].get<double>();
  if (j.contains("seconds") && j["seconds"].is_object()) {
    for (const auto& [k, v] : j["seconds"].items()) {
      if (v.is_number()) s.phases[k] = v.get<double>();
    }
  }
  if (j.contains("error") && j["error"].is_string()) s.error = j["error"].get<std::string>();
  return s;
}

json StockJson(const StockOutcome& s) {
  return {{"compiled", s.compiled},
          {"correct", s.correct},
          {"seconds", s.seconds},
          {"phases", s.phases},
          {"runtime_ms", s.runtime_ms ? json(*s.runtime_ms) : json(nullptr)},
          {"error", s.error}};
}

// Writes each verdict to `log` as it is reported (in job order), so a pass cut
// short still leaves what it decided.
std::vector<Verdict> AnvilPass(const std::vector<Evaluator*>& evaluators, const std::vector<Job>& jobs,
                               const BatchOptions& batch, const std::string& name, const fs::path& log,
                               const BenchProgress& progress) {
  std::ofstream out(log, std::ios::trunc);
  return RunJobs(evaluators, jobs, batch, [&](const Job&, const Verdict& v, const Progress& p) {
    out << VerdictToJson(v, -1) << "\n" << std::flush;
    if (progress) progress(name, p.done, p.total);
  });
}

struct Summary {
  double mean = 0, median = 0, max = 0;
  int n = 0;
};

Summary Summarize(std::vector<double> values) {
  Summary s;
  for (double v : values) {
    s.mean += v;
    s.max = std::max(s.max, v);
  }
  s.n = static_cast<int>(values.size());
  if (s.n == 0) return s;
  s.mean /= s.n;
  std::sort(values.begin(), values.end());
  s.median = s.n % 2 == 1 ? values[s.n / 2] : (values[s.n / 2 - 1] + values[s.n / 2]) / 2;
  return s;
}

// A verdict's seconds beyond compiling, the kernels' own time (trials, warmup
// and timed calls at the measured median), waiting — for the device while
// other evaluations held it, for a compile slot — and the task's preparation
// and eager baseline (once per task, not per candidate: the bench reports
// them as stages of their own), and the run's one-time setup (torch's build
// facts, the sandbox probe).
// A candidate that ran into its deadline spent the deadline: its own time.
double Overhead(const Verdict& v) {
  double kernel_s = 0;
  if (v.perf.ran) kernel_s = (v.correct.trials + v.perf.warmup + v.perf.iters) * v.perf.candidate.median_ms / 1e3;
  if (v.run.timed_out) kernel_s = v.run.deadline_seconds;
  auto stage = [&](const char* name) {
    const auto it = v.stage_seconds.find(name);
    return it != v.stage_seconds.end() ? it->second : 0.0;
  };
  // The compile stage also holds the wait for the one-time torch PCH (the
  // compiler's time too); the eager baseline is measured once per task.
  const double compile_s = std::max(v.compile.seconds, stage("compile"));
  return std::max(0.0, v.seconds - compile_s - kernel_s - v.device_wait_seconds - v.compile_wait_seconds -
                           stage("setup") - stage("prepare") - stage("baselines"));
}

std::map<std::string, std::vector<double>> ByStage(const std::vector<Verdict>& verdicts) {
  std::map<std::string, std::vector<double>> stages;
  for (const Verdict& v : verdicts) {
    for (const auto& [k, s] : v.stage_seconds) stages[k].push_back(s);
    for (const auto& [k, s] : v.run.phase_seconds) stages["process." + k].push_back(s);
    stages["device_wait"].push_back(v.device_wait_seconds);
    stages["compile_wait"].push_back(v.compile_wait_seconds);
  }
  return stages;
}

std::string Percent(const std::optional<double>& v) { return v ? Fixed(*v * 100, 1) + " %" : "-"; }

}  // namespace

std::string RenameExtensions(const std::string& text, const std::string& suffix, int* renamed) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t call = text.find("load_inline(", at);
    if (call == std::string::npos) break;
    // The call's `name=` keyword: the first one before the call's closing
    // parenthesis (sources are string literals, so count only outside them
    // roughly: a name= inside a source would be C++, not a keyword).
    std::size_t p = call + 12;
    int depth = 1;
    std::size_t name_at = std::string::npos;
    char quote = 0;
    for (; p < text.size() && depth > 0; ++p) {
      const char c = text[p];
      if (quote != 0) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        --depth;
      } else if (depth == 1 && name_at == std::string::npos && text.compare(p, 4, "name") == 0 &&
                 (p == 0 || !(std::isalnum(static_cast<unsigned char>(text[p - 1])) || text[p - 1] == '_'))) {
        std::size_t q = p + 4;
        while (q < text.size() && text[q] == ' ') ++q;
        if (q < text.size() && text[q] == '=' && text.compare(q, 2, "==") != 0) {
          ++q;
          while (q < text.size() && text[q] == ' ') ++q;
          if (q < text.size() && (text[q] == '"' || text[q] == '\'')) {
            const std::size_t close = text.find(text[q], q + 1);
            if (close != std::string::npos) name_at = close;  // Where the suffix goes.
          }
        }
      }
    }
    if (name_at == std::string::npos) {
      out += text.substr(at, p - at);
    } else {
      out += text.substr(at, name_at - at) + suffix + text.substr(name_at, p - name_at);
      if (renamed != nullptr) ++*renamed;
    }
    at = p;
  }
  return out + text.substr(std::min(at, text.size()));
}

namespace {

// A copy of job `i`'s candidate under `dir`, its load_inline extensions
// suffixed with `suffix` (`renamed` counts them); nullopt when it cannot be
// read or written (the evaluation of the original reports it).
std::optional<fs::path> RenamedCopy(const fs::path& candidate, const std::string& suffix, const fs::path& dir,
                                    std::size_t i, int* renamed) {
  auto text = ReadFile(candidate);
  if (!text.ok()) return std::nullopt;
  std::string copy = RenameExtensions(text.value(), suffix, renamed);
  // A native source has no extension name: a comment makes it new (built anew).
  if (candidate.extension() != ".py") copy += "\n// anvil bench throughput: copy " + suffix + "\n";
  const fs::path to = dir / (std::to_string(i) + "_" + candidate.filename().string());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!WriteFileAtomic(to, copy).ok()) return std::nullopt;
  return to;
}

// `jobs` as new candidates for the steady pass: each renamed with `_s<i>`, on
// the same tasks.
std::vector<Job> SteadyJobs(const std::vector<Job>& given, const fs::path& work) {
  std::vector<Job> jobs = given;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (auto to =
            RenamedCopy(given[i].candidate, "_s" + std::to_string(i), work / "steady" / "candidates", i, nullptr)) {
      jobs[i].candidate = *to;
    }
  }
  return jobs;
}

// `jobs` as new work for the fresh pass: each candidate's extensions renamed
// with `_f<i>` (from the given file), each task a copy that differs by a
// comment line, under work/fresh/.
std::vector<Job> FreshJobs(const std::vector<Job>& given, const fs::path& work) {
  std::vector<Job> jobs = given;
  std::map<std::string, Task> tasks;  // By the given task's path.
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string key = given[i].task.path.string();
    auto it = tasks.find(key);
    if (it == tasks.end()) {
      const fs::path to = work / "fresh" / "tasks" / std::to_string(tasks.size()) / given[i].task.path.filename();
      auto text = ReadFile(given[i].task.path);
      std::error_code ec;
      fs::create_directories(to.parent_path(), ec);
      Result<Task> task = text.status();
      if (text.ok()) {
        Status written = WriteFileAtomic(to, text.value() + "\n# anvil bench throughput: a new task (fresh pass)\n");
        task = written.ok() ? LoadTask(to) : Result<Task>(written);
      }
      it = tasks.emplace(key, task.ok() ? task.value() : given[i].task).first;
    }
    jobs[i].task = it->second;
    if (auto to =
            RenamedCopy(given[i].candidate, "_f" + std::to_string(i), work / "fresh" / "candidates", i, nullptr)) {
      jobs[i].candidate = *to;
    }
  }
  return jobs;
}

}  // namespace

ThroughputReport RunThroughputBench(const std::vector<Evaluator*>& evaluators, const Backend& backend,
                                    const std::vector<Job>& given, const BatchOptions& batch,
                                    const ThroughputOptions& o, const BenchProgress& progress) {
  ThroughputReport report;
  std::vector<Job> jobs = given;
  if (o.distinct_builds) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      int renamed = 0;
      auto to = RenamedCopy(jobs[i].candidate, "_b" + std::to_string(i), o.work / "candidates", i, &renamed);
      if (!to || renamed == 0) continue;
      jobs[i].candidate = *to;
      ++report.renamed;
    }
  }
  report.jobs = jobs;
  report.gpus = static_cast<int>(evaluators.size());
  report.jobs_per_gpu = batch.parallel;
  report.compile_ahead = batch.compile_ahead;
  const int n = static_cast<int>(jobs.size());
  auto run_pass = [&](const std::string& name, const std::vector<Job>& pass_jobs, std::vector<Verdict>& into) {
    GpuSampler sampler(backend, report.gpus);
    const auto start = Clock::now();
    into = AnvilPass(evaluators, pass_jobs, batch, name, o.work / (name.substr(6) + "_verdicts.jsonl"), progress);
    BenchPass pass = Pass(name, Since(start), n);
    sampler.Fill(pass);
    report.passes.push_back(pass);
  };
  if (o.anvil) {
    run_pass("anvil_cold", jobs, report.cold);
    if (o.warm) run_pass("anvil_warm", jobs, report.warm);
    if (o.steady) run_pass("anvil_steady", SteadyJobs(jobs, o.work), report.steady);
    if (o.fresh) {
      // The earlier passes' prepared tasks are of no use to new tasks (a long
      // run's cache evicts them): their room on the disk goes to the new ones
      // (two passes' worth overfilled the H200 machine's disk).
      for (Evaluator* e : evaluators) e->ForgetTasks();
      (void)RemoveTree(evaluators.front()->options().cache_dir / "tasks");
      run_pass("anvil_fresh", FreshJobs(jobs, o.work), report.fresh);
    }
  }
  for (const Verdict& v : report.cold) {
    if (v.compile.pch == "built") {
      auto it = v.compile.phase_seconds.find("pch");
      if (it != v.compile.phase_seconds.end()) report.pch_seconds = std::max(report.pch_seconds, it->second);
    }
  }
  report.stock_deadline_seconds = std::chrono::duration<double>(o.stock_deadline).count();
  if (o.stock) {
    const int k = o.stock_sample > 0 ? std::min(o.stock_sample, n) : n;
    std::vector<bool> chosen(n, false);
    for (int i = 0; i < k; ++i) chosen[static_cast<std::size_t>(i) * n / k] = true;
    report.stock.resize(n);
    // Each outcome is logged as it comes, so a run cut short still leaves the ones it timed.
    std::ofstream log(o.work / "stock_outcomes.jsonl", std::ios::trunc);
    GpuSampler sampler(backend, 1);
    const auto start = Clock::now();
    int done = 0;
    for (int i = 0; i < n; ++i) {
      if (!chosen[i]) continue;
      report.stock[i] = RunStock(jobs[i], backend, o, o.work / "stock" / std::to_string(i));
      json line = StockJson(report.stock[i]);
      line["candidate"] = jobs[i].candidate.string();
      line["elapsed"] = Since(start);
      log << line.dump() << std::endl;
      if (progress) progress("stock", ++done, k);
    }
    BenchPass pass = Pass("stock", Since(start), k);
    sampler.Fill(pass);
    report.passes.push_back(pass);
  }
  return report;
}

namespace {

// The cold pass's verdicts/hour without the one-time torch PCH build.
double RateWithoutPch(const BenchPass& cold, const ThroughputReport& r) {
  return cold.candidates * 3600.0 / std::max(cold.seconds - r.pch_seconds, 1e-9);
}

}  // namespace

std::optional<double> EstimatedStockSeconds(const ThroughputReport& r) {
  const std::size_t n = r.jobs.size();
  auto hung = [&](std::size_t i) { return i < r.cold.size() && r.cold[i].status == VerdictStatus::kTimeout; };
  double sum[2] = {0, 0};  // By kind: [0] did not hang, [1] hung.
  int count[2] = {0, 0};
  std::size_t ran = 0;
  for (std::size_t i = 0; i < n && i < r.stock.size(); ++i) {
    if (!r.stock[i].ran) continue;
    ++ran;
    const int kind = hung(i) || r.stock[i].error == "timed out" ? 1 : 0;
    sum[kind] += r.stock[i].seconds;
    ++count[kind];
  }
  if (ran == 0 || ran == n) return std::nullopt;
  const double all = (sum[0] + sum[1]) / static_cast<double>(ran);
  // A kind the sample missed: a hang costs the limit; anything else the sample's mean.
  const double mean[2] = {count[0] > 0 ? sum[0] / count[0] : all,
                          count[1] > 0 ? sum[1] / count[1] : std::max(r.stock_deadline_seconds, all)};
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool sampled = i < r.stock.size() && r.stock[i].ran;
    total += sampled ? r.stock[i].seconds : mean[hung(i) ? 1 : 0];
  }
  return total / static_cast<double>(n);
}

std::string ThroughputMarkdown(const ThroughputReport& r) {
  std::ostringstream md;
  md << "candidates: " << r.jobs.size() << ", GPUs: " << r.gpus << ", run slots per GPU: " << r.jobs_per_gpu
     << ", compiles ahead: " << r.compile_ahead << "\n\n";
  if (r.renamed > 0) {
    md << r.renamed << " candidates got a load_inline extension name of their own (a copy under the work folder), so "
       << "no two share a build.\n\n";
  }
  for (const BenchPass& p : r.passes) {
    if (p.name == "stock" && p.candidates < static_cast<int>(r.jobs.size())) {
      md << "The stock path ran on " << p.candidates << " of the " << r.jobs.size()
         << " candidates (spread evenly over the list); its verdicts/hour are theirs.\n\n";
    }
  }
  md << "| pass | seconds | verdicts/hour | GPU busy (mean utilization) | GPU idle (samples at 0 %) |\n";
  md << "|---|---|---|---|---|\n";
  for (const BenchPass& p : r.passes) {
    md << "| " << p.name << " | " << Fixed(p.seconds, 1) << " | " << Fixed(p.verdicts_per_hour, 0) << " | "
       << Percent(p.gpu_busy) << " | " << Percent(p.gpu_idle) << " |\n";
  }
  const BenchPass* cold = nullptr;
  const BenchPass* stock = nullptr;
  // The passes of new candidates after the cold one, with what each reused.
  std::vector<std::pair<const BenchPass*, std::string>> later;
  for (const BenchPass& p : r.passes) {
    if (p.name == "anvil_cold") cold = &p;
    if (p.name == "anvil_steady")
      later.emplace_back(&p, "new candidates on the same tasks, prepared and timed by the cold pass");
    if (p.name == "anvil_fresh")
      later.emplace_back(&p, "new candidates on new tasks, the machine set up by the cold pass");
    if (p.name == "stock") stock = &p;
  }
  if (cold && stock && stock->verdicts_per_hour > 0) {
    md << "\nanvil (cold) / stock: **" << Fixed(cold->verdicts_per_hour / stock->verdicts_per_hour, 1) << "x**";
    if (r.pch_seconds > 0) {
      md << " (" << Fixed(RateWithoutPch(*cold, r) / stock->verdicts_per_hour, 1)
         << "x without the one-time torch PCH build, " << Fixed(r.pch_seconds, 1) << " s)";
    }
    md << "\n";
  }
  for (const auto& [pass, what] : later) {
    if (!stock || stock->verdicts_per_hour <= 0) break;
    md << "\nanvil (" << pass->name.substr(6) << ": " << what << ") / stock: **"
       << Fixed(pass->verdicts_per_hour / stock->verdicts_per_hour, 1) << "x**\n";
  }
  if (const auto per = EstimatedStockSeconds(r); per && cold && *per > 0) {
    const double rate = 3600.0 / *per;
    md << "\nThe stock path over the whole set, estimated from its sample (a candidate anvil found to hang counted at "
       << "what the sample's hangs took, or the stock limit; any other at the sample's mean of the rest): "
       << Fixed(*per, 1) << " s a candidate, " << Fixed(rate, 0) << "/h: anvil (cold) / stock **"
       << Fixed(cold->verdicts_per_hour / rate, 1) << "x**";
    if (r.pch_seconds > 0) {
      md << " (" << Fixed(RateWithoutPch(*cold, r) / rate, 1) << "x without the one-time torch PCH build)";
    }
    for (const auto& [pass, what] : later) {
      md << "; anvil (" << pass->name.substr(6) << ") / stock **" << Fixed(pass->verdicts_per_hour / rate, 1) << "x**";
    }
    md << "\n";
  }
  // Stages by anvil pass: cold, then steady and fresh where they ran, then warm.
  std::vector<std::pair<std::string, const std::vector<Verdict>*>> columns = {{"cold", &r.cold}};
  if (!r.steady.empty()) columns.emplace_back("steady", &r.steady);
  if (!r.fresh.empty()) columns.emplace_back("fresh", &r.fresh);
  columns.emplace_back("warm", &r.warm);
  md << "\n| anvil stage (mean / max s per candidate) |";
  for (const auto& [label, verdicts] : columns) md << " " << label << " |";
  md << "\n|---|";
  for (std::size_t c = 0; c < columns.size(); ++c) md << "---|";
  md << "\n";
  std::vector<std::map<std::string, std::vector<double>>> by_stage;
  for (const auto& column : columns) by_stage.push_back(ByStage(*column.second));
  for (const auto& [stage, values] : by_stage.front()) {
    md << "| " << stage << " |";
    for (auto& stages : by_stage) {
      const Summary s = Summarize(stages[stage]);
      md << " " << Fixed(s.mean, 3) << " / " << Fixed(s.max, 3) << " |";
    }
    md << "\n";
  }
  std::vector<Summary> overheads;
  for (const auto& column : columns) {
    std::vector<double> o;
    for (const Verdict& v : *column.second) o.push_back(Overhead(v));
    overheads.push_back(Summarize(o));
  }
  md << "| overhead beyond compile, kernel time, per-task work (preparation, baseline), one-time setup and waits |";
  for (const Summary& s : overheads) md << " " << Fixed(s.mean, 3) << " / " << Fixed(s.max, 3) << " |";
  md << "\n| the same overhead, median |";
  for (const Summary& s : overheads) md << " " << Fixed(s.median, 3) << " |";
  md << "\n";
  md << "\n| candidate | anvil (cold) | anvil s | warm overhead s | stock | stock s | stock compile s |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const Verdict* v = i < r.cold.size() ? &r.cold[i] : nullptr;
    const StockOutcome* s = i < r.stock.size() && r.stock[i].ran ? &r.stock[i] : nullptr;
    std::string stock = "-";
    if (s) {
      stock = !s->compiled ? "not compiled" : (s->correct ? "correct" : "incorrect");
      if (!s->error.empty()) stock += " (" + s->error.substr(0, 60) + ")";
    }
    const double stock_compile = s && s->phases.count("compile") ? s->phases.at("compile") : 0;
    md << "| " << r.jobs[i].task.name << " / " << r.jobs[i].candidate.filename().string() << " | "
       << (v ? StatusName(v->status) : "-") << " | " << (v ? Fixed(v->seconds, 1) : "-") << " | "
       << (i < r.warm.size() ? Fixed(Overhead(r.warm[i]), 2) : "-") << " | " << stock << " | "
       << (s ? Fixed(s->seconds, 1) : "-") << " | " << Fixed(stock_compile, 1) << " |\n";
  }
  return md.str();
}

std::string ThroughputJson(const ThroughputReport& r) {
  json passes = json::array();
  for (const BenchPass& p : r.passes) {
    passes.push_back({{"name", p.name},
                      {"seconds", p.seconds},
                      {"candidates", p.candidates},
                      {"verdicts_per_hour", p.verdicts_per_hour},
                      {"gpu_busy", p.gpu_busy ? json(*p.gpu_busy) : json(nullptr)},
                      {"gpu_idle", p.gpu_idle ? json(*p.gpu_idle) : json(nullptr)}});
  }
  auto stages = [](const std::vector<Verdict>& verdicts) {
    json j = json::object();
    for (const auto& [stage, values] : ByStage(verdicts)) {
      const Summary s = Summarize(values);
      j[stage] = {{"mean", s.mean}, {"max", s.max}, {"n", s.n}};
    }
    std::vector<double> overhead;
    for (const Verdict& v : verdicts) overhead.push_back(Overhead(v));
    const Summary s = Summarize(overhead);
    j["overhead"] = {{"mean", s.mean}, {"median", s.median}, {"max", s.max}, {"n", s.n}};
    return j;
  };
  json candidates = json::array();
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    json c = {{"task", r.jobs[i].task.name}, {"candidate", r.jobs[i].candidate.string()}};
    if (i < r.cold.size()) c["anvil_cold"] = {{"status", StatusName(r.cold[i].status)}, {"seconds", r.cold[i].seconds}};
    if (i < r.steady.size()) {
      c["anvil_steady"] = {{"status", StatusName(r.steady[i].status)}, {"seconds", r.steady[i].seconds}};
    }
    if (i < r.fresh.size()) {
      c["anvil_fresh"] = {{"status", StatusName(r.fresh[i].status)}, {"seconds", r.fresh[i].seconds}};
    }
    if (i < r.warm.size()) c["anvil_warm"] = {{"status", StatusName(r.warm[i].status)}, {"seconds", r.warm[i].seconds}};
    if (i < r.stock.size() && r.stock[i].ran) {
      c["stock"] = StockJson(r.stock[i]);
    }
    candidates.push_back(c);
  }
  json estimate = nullptr;
  if (const auto per = EstimatedStockSeconds(r); per && *per > 0) {
    estimate = {{"seconds_per_candidate", *per}, {"verdicts_per_hour", 3600.0 / *per}};
  }
  json j = {{"gpus", r.gpus},          {"jobs_per_gpu", r.jobs_per_gpu}, {"compile_ahead", r.compile_ahead},
            {"renamed", r.renamed},    {"pch_seconds", r.pch_seconds},   {"stock_estimate", estimate},
            {"passes", passes},        {"stages_cold", stages(r.cold)},  {"stages_warm", stages(r.warm)},
            {"candidates", candidates}};
  if (!r.steady.empty()) j["stages_steady"] = stages(r.steady);
  if (!r.fresh.empty()) j["stages_fresh"] = stages(r.fresh);
  return j.dump(2);
}

}  // namespace anvil
