// `anvil eval`: one candidate, many candidates, or the bundled examples.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "cli/table.h"
#include "core/environment.h"
#include "core/fixed.h"
#include "pipeline/batch.h"
#include "pipeline/verdict_log.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

struct EvalArgs : EvalFlags {
  std::string task;
  std::vector<std::string> candidates;
  std::string list;
  std::string format = "auto";
  bool json = false;
  std::string out;
  std::optional<double> atol, rtol;
  double lambda = 0.5;
  double nu_max = 4;
  std::string reward_vs = "eager";
  bool keep = false;
  bool check_expected = false;
  bool timeout_given = false;  // --timeout on the command line.
};

// The bundled examples are tiny: a hang is known well before the default deadline.
constexpr double kExamplesTimeoutSeconds = 20;

std::string Short(const std::string& path) {
  std::error_code ec;
  fs::path rel = fs::relative(path, fs::current_path(ec), ec);
  std::string r = rel.string();
  return (!ec && !r.empty() && r.rfind("..", 0) != 0) ? r : path;
}

std::string PerfCell(const Verdict& v) {
  if (!v.perf.ran) return "-";
  std::string s = Fixed(v.perf.candidate.median_ms, 4) + " ms";
  if (v.perf.speedup_eager > 0) s += " " + Fixed(v.perf.speedup_eager, 2) + "x eager";
  if (v.perf.speedup_compile > 0) s += " " + Fixed(v.perf.speedup_compile, 2) + "x compile";
  return s;
}

void PrintVerdict(const Verdict& v) {
  std::printf("%s  %s  [%s, %s]\n", v.task.c_str(), Short(v.candidate).c_str(), v.format.c_str(), v.backend.c_str());
  std::printf("status:  %s    reward: %s    (%.1f s)\n", StatusName(v.status),
              v.reward ? Fixed(*v.reward, 3).c_str() : "none (the machine failed)", v.seconds);
  if (v.compile.ran) {
    std::printf("compile: %s (%s, %s)\n", v.compile.ok ? "ok" : "FAILED", v.compile.compiler.c_str(),
                v.compile.cached ? "cached" : (Fixed(v.compile.seconds, 1) + " s").c_str());
  }
  if (v.run.ran) {
    std::printf("run:     %s (%d trials completed, %.1f s)\n", v.run.ok ? "ok" : "FAILED", v.run.trials_completed,
                v.run.seconds);
  }
  if (v.correct.ran) std::printf("correct: %d/%d trials\n", v.correct.passed, v.correct.trials);
  if (v.legal.ran) {
    std::printf("legal:   %s (%zu rule hits)\n", v.legal.ok ? "ok" : "CHEAT", v.legal.hits.size());
    for (const auto& h : v.legal.hits) {
      std::printf("         [%s] %s: %s (line %d: %s)\n", h.severity.c_str(), h.rule.c_str(), h.message.c_str(), h.line,
                  h.excerpt.c_str());
    }
  }
  if (v.perf.ran) {
    std::printf("perf:    median %s ms (IQR %s ms, CV %s)", Fixed(v.perf.candidate.median_ms, 4).c_str(),
                Fixed(v.perf.candidate.iqr_ms, 4).c_str(), Fixed(v.perf.candidate.cv, 3).c_str());
    if (v.perf.eager) {
      std::printf("; eager %s ms (%sx)", Fixed(v.perf.eager->median_ms, 4).c_str(),
                  Fixed(v.perf.speedup_eager, 2).c_str());
    }
    if (v.perf.compile) {
      std::printf("; torch.compile %s ms (%sx)", Fixed(v.perf.compile->median_ms, 4).c_str(),
                  Fixed(v.perf.speedup_compile, 2).c_str());
    }
    std::printf("\n");
    if (!v.perf.eager_error.empty()) std::printf("         eager baseline: %s\n", v.perf.eager_error.c_str());
    if (!v.perf.compile_error.empty()) std::printf("         compile baseline: %s\n", v.perf.compile_error.c_str());
  }
  std::printf("feedback:\n%s", v.feedback.c_str());
  if (!v.feedback.empty() && v.feedback.back() != '\n') std::printf("\n");
}

void PrintSummary(const std::vector<Job>& jobs, const std::vector<Verdict>& verdicts, bool show_rows) {
  bool any_expected = false;
  for (const auto& j : jobs) any_expected = any_expected || !j.expected.empty();
  if (show_rows) {
    std::vector<std::string> header = {"task", "candidate", "format", "status"};
    if (any_expected) header.push_back("expected");
    header.insert(header.end(), {"reward", "time", "perf"});
    TextTable rows(header);
    for (std::size_t i = 0; i < verdicts.size(); ++i) {
      const Verdict& v = verdicts[i];
      std::vector<std::string> row = {v.task, fs::path(v.candidate).filename().string(), v.format,
                                      StatusName(v.status)};
      if (any_expected) {
        std::string e = jobs[i].expected;
        row.push_back(e.empty() ? "-" : (e == StatusName(v.status) ? e : e + " (MISMATCH)"));
      }
      row.insert(row.end(), {v.reward ? Fixed(*v.reward, 2) : "-", Fixed(v.seconds, 1) + " s", PerfCell(v)});
      rows.Add(row);
    }
    std::printf("\n%s", rows.Render().c_str());
  }
  std::map<std::string, int> by_status;
  for (const auto& v : verdicts) by_status[StatusName(v.status)]++;
  TextTable summary({"status", "count"});
  for (const char* s : {"pass", "compile_error", "runtime_error", "timeout", "wrong_answer", "cheat", "infra_error"}) {
    if (by_status.count(s)) summary.Add({s, std::to_string(by_status[s])});
  }
  summary.Add({"total", std::to_string(verdicts.size())});
  std::printf("\n%s", summary.Render().c_str());
}

int Run(const EvalArgs& a) {
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "anvil eval: %s\n", backend.message().c_str());
    return kExitUsage;
  }
  auto options = ToEvalOptions(a);
  if (!options.ok()) {
    std::fprintf(stderr, "anvil eval: %s\n", options.message().c_str());
    return kExitUsage;
  }
  EvalOptions o = options.value();
  o.format = a.format == "auto" ? "" : a.format;
  o.atol = a.atol;
  o.rtol = a.rtol;
  o.reward.lambda = a.lambda;
  o.reward.nu_max = a.nu_max;
  o.reward.against_compile = a.reward_vs == "compile";
  o.keep_work = a.keep;

  Result<std::vector<Job>> jobs = Status::Error("");
  bool examples = false;
  if (!a.list.empty()) {
    jobs = JobsFromList(a.list);
  } else if (a.task.empty() && a.candidates.empty()) {
    examples = true;
    if (!a.timeout_given)
      o.run_deadline = std::chrono::milliseconds(static_cast<int64_t>(kExamplesTimeoutSeconds * 1000));
    jobs = JobsForTree(SourceDir() / "examples" / "tasks", SourceDir() / "examples" / "candidates");
  } else if (a.task.empty()) {
    std::fprintf(stderr, "anvil eval: --candidate needs --task (or use --list FILE.jsonl)\n");
    return kExitUsage;
  } else if (a.candidates.empty()) {
    std::fprintf(stderr, "anvil eval: --task needs --candidate (a file or a folder)\n");
    return kExitUsage;
  } else {
    std::error_code ec;
    if (fs::is_directory(a.task, ec)) {
      if (a.candidates.size() != 1 || !fs::is_directory(a.candidates[0], ec)) {
        std::fprintf(stderr,
                     "anvil eval: with a task folder, --candidate must be one folder holding one "
                     "subfolder per task name\n");
        return kExitUsage;
      }
      jobs = JobsForTree(a.task, a.candidates[0]);
    } else {
      auto task = LoadTask(a.task);
      if (!task.ok()) {
        std::fprintf(stderr, "anvil eval: %s\n", task.message().c_str());
        return kExitUsage;
      }
      std::vector<fs::path> cands(a.candidates.begin(), a.candidates.end());
      jobs = JobsForTask(task.value(), cands);
    }
  }
  if (!jobs.ok()) {
    std::fprintf(stderr, "anvil eval: %s\n", jobs.message().c_str());
    return kExitUsage;
  }
  // --out names the file of an earlier run: what it already holds is not evaluated again.
  std::size_t already = 0;
  if (!a.out.empty()) {
    auto finished = FinishedJobs(a.out, backend.value().name(), o.policy.Id(), "anvil eval");
    if (!finished.ok()) {
      std::fprintf(stderr, "anvil eval: %s\n", finished.message().c_str());
      return kExitUsage;
    }
    const std::set<std::string> done(finished.value().begin(), finished.value().end());
    std::vector<Job> pending;
    for (Job& j : jobs.value()) {
      if (done.count(JobKey(j.task.path, j.candidate)) == 0) pending.push_back(std::move(j));
    }
    already = jobs.value().size() - pending.size();
    jobs.value() = std::move(pending);
    if (already > 0) {
      std::fprintf(stderr, "anvil eval: %zu candidate(s) already have a verdict in %s; evaluating %zu\n", already,
                   a.out.c_str(), jobs.value().size());
    }
    if (jobs.value().empty()) return kExitOk;
  }
  const bool single = jobs.value().size() == 1 && !examples && already == 0;

  std::unique_ptr<std::ofstream> out_file;
  if (!a.out.empty()) {
    out_file = std::make_unique<std::ofstream>(a.out, std::ios::app);
    if (!*out_file) {
      std::fprintf(stderr, "anvil eval: cannot write %s\n", a.out.c_str());
      return kExitUsage;
    }
  }

  auto evaluators = MakeEvaluators(backend.value(), o, a.gpus);
  if (!evaluators.ok()) {
    std::fprintf(stderr, "anvil %s: %s\n", "eval", evaluators.message().c_str());
    return kExitUsage;
  }
  Evaluator& evaluator = evaluators.value().first();
  // A task that cannot be prepared is bad input: say so once, clearly, instead
  // of a verdict. One candidate's task is prepared while the candidate is
  // extracted and compiled; its verdict waits for the answer.
  std::shared_future<Result<PreparedTask>> preparing;
  // Not on a disk below anvil's floor: the verdict says so (infra_error), not a bad task.
  if (single && backend.value().HasDevice() && !NoRoomToJudge(o.cache_dir)) {
    preparing = evaluator.PrepareAsync(jobs.value().front().task);
  }
  std::string bad_task;
  if (!backend.value().HasDevice()) {
    std::fprintf(stderr,
                 "anvil eval: no %s device on this machine: running the compile gate and the static "
                 "checks only\n",
                 backend.value().name().c_str());
  }

  const bool tty = isatty(STDERR_FILENO) != 0;
  auto on_verdict = [&](const Job& job, const Verdict& v, const Progress& p) {
    // The machine's failure to prepare it (a full disk) is the verdict's infra_error, not a bad task.
    if (preparing.valid() && !preparing.get().ok() && !preparing.get().status().machine_error()) {
      bad_task = preparing.get().message();
      return;
    }
    if (out_file) *out_file << VerdictToJson(v, -1) << "\n" << std::flush;
    if (a.json) std::printf("%s\n", VerdictToJson(v, single ? 2 : -1).c_str());
    if (single || a.quiet) return;
    double rate = p.elapsed_seconds > 0 ? p.done / p.elapsed_seconds : 0;
    double eta = rate > 0 ? (p.total - p.done) / rate : 0;
    std::string mark =
        (!job.expected.empty() && job.expected != StatusName(v.status)) ? "  (expected " + job.expected + ")" : "";
    std::fprintf(stderr, "%s[%zu/%zu] %-14s %s/%s  %.1f s  | %.2f/min, ETA %.0f s%s%s", tty ? "\r\033[K" : "", p.done,
                 p.total, StatusName(v.status), job.task.name.c_str(), job.candidate.filename().c_str(), v.seconds,
                 rate * 60, eta, mark.c_str(), tty && p.done < p.total ? "" : "\n");
    std::fflush(stderr);
  };
  if (!single && !a.quiet) {
    std::fprintf(stderr, "anvil eval: %zu candidates on %s\n", jobs.value().size(), backend.value().name().c_str());
  }
  std::vector<Verdict> verdicts =
      RunJobs(evaluators.value().all, jobs.value(), ToBatchOptions(a, backend.value()), on_verdict);
  if (!bad_task.empty()) {
    std::fprintf(stderr, "anvil eval: %s\n", bad_task.c_str());
    return kExitUsage;
  }

  if (!a.json) {
    if (single) {
      PrintVerdict(verdicts.front());
    } else {
      PrintSummary(jobs.value(), verdicts, true);
    }
  }
  int mismatches = 0;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const std::string& e = jobs.value()[i].expected;
    if (!e.empty() && e != StatusName(verdicts[i].status)) ++mismatches;
  }
  if (examples && !a.json) {
    std::printf("\n%s\n", mismatches == 0 ? "Every example got its expected status."
                                          : (std::to_string(mismatches) + " example(s) did NOT get their "
                                                                          "expected status.")
                                                .c_str());
  }
  if (a.check_expected && mismatches > 0) return kExitFailure;
  return kExitOk;
}

}  // namespace

void RegisterEval(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd =
      app.add_subcommand("eval",
                         "Verify candidates against a task: compile, run, correct, legal, perf -> verdict.\n"
                         "With no --task/--candidate, evaluates the bundled examples.");
  cmd->add_option("-t,--task", args->task, "Task file (KernelBench format) or a folder of tasks");
  cmd->add_option("-c,--candidate", args->candidates,
                  "Candidate file(s) or folder(s); with a task folder, one folder with a subfolder per task");
  cmd->add_option("--list", args->list, "JSONL file of {\"task\": path, \"candidate\": path} jobs");
  AddEvalFlags(cmd, *args);
  cmd->add_option("--format", args->format, "auto, kernelbench or native")
      ->check(CLI::IsMember({"auto", "kernelbench", "native"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print verdicts as JSON (one object; JSON lines for many)");
  cmd->add_option("-o,--out", args->out,
                  "Append every verdict as a JSON line to this file; candidates it already has a verdict for "
                  "(on this backend, not infra_error) are skipped, so an interrupted run resumes");
  cmd->add_option("--atol", args->atol, "Absolute tolerance for every dtype (default: per dtype)");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance for every dtype (default: per dtype)");
  cmd->add_option("--lambda", args->lambda, "Reward: weight of the speedup bonus")->capture_default_str();
  cmd->add_option("--nu-max", args->nu_max, "Reward: cap on speedup - 1")->capture_default_str();
  cmd->add_option("--reward-vs", args->reward_vs, "Reward speedup against eager or compile")
      ->check(CLI::IsMember({"eager", "compile"}))
      ->capture_default_str();
  cmd->add_flag("--keep", args->keep, "Keep each run's work folder (outputs, logs)");
  cmd->add_flag("--check-expected", args->check_expected,
                "Exit 1 when a candidate's `anvil-expect:` header disagrees with its verdict");
  cmd->callback([args, cmd, &exit_code] {
    args->timeout_given = cmd->count("--timeout") > 0;
    exit_code = Run(*args);
  });
}

}  // namespace anvil
