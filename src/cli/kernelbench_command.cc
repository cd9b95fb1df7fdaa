// `anvil kernelbench`: evaluate a KernelBench run folder (many problems, many
// samples each) and report Pass@k, Avg@N, Faster Rate, geometric-mean speedups
// and fast_p per level. Every verdict is appended to a JSONL file as soon as it
// exists, and a rerun skips what that file already holds (docs/kernelbench.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "cli/table.h"
#include "core/environment.h"
#include "core/files.h"
#include "core/fixed.h"
#include "pipeline/batch.h"
#include "pipeline/verdict_log.h"
#include "report/kernelbench_layout.h"
#include "report/metrics.h"
#include "report/metrics_json.h"
#include "report/run_records.h"
#include "report/verdict_records.h"
#include "runs/run_db.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

using nlohmann::json;

constexpr const char* kDefaultOutName = "anvil_verdicts.jsonl";
constexpr std::size_t kMaxListed = 10;                  // Skipped files and missing problems shown on stderr.
constexpr double kTableFastP[] = {0.0, 1.0, 1.5, 2.0};  // fast_p columns of the text table (JSON has all).

struct KernelbenchArgs : EvalFlags {
  std::string run_dir;
  std::string kernelbench;
  std::string out;
  double faster_than = 1.1;
  bool json = false;
  bool retry_infra = false;
  std::string turn = "each";  // A run database's turns to show: first, last, K or each.
};

// Verdicts already in the output file, by candidate file name (which holds
// the level, problem and sample). The last line for a file wins.
struct VerdictLog {
  std::map<std::string, SampleRecord> done;
  int other_backend = 0;  // Candidates logged only with another backend or policy: evaluated again.
  int infra_retried = 0;  // Candidates logged only as infra_error, with --retry-infra: evaluated again.
};

SampleRecord RecordFromVerdict(const SampleId& id, const Verdict& v) {
  SampleRecord r;
  r.level = id.level;
  r.problem = id.problem;
  r.sample = id.sample;
  r.status = StatusName(v.status);
  r.correctness_rate = v.correctness_rate;
  r.speedup_eager = v.perf.speedup_eager;
  r.speedup_compile = v.perf.speedup_compile;
  r.degenerate = !v.task_degenerate.empty();
  return r;
}

// Reads the verdicts of an earlier, possibly interrupted run. A last line cut
// short by the interruption is dropped from the file so that appending starts
// on a fresh line; other lines that are not verdicts are ignored with a warning.
Result<VerdictLog> ReadVerdictLog(const fs::path& out, const std::string& backend, const std::string& policy_id,
                                  bool retry_infra) {
  VerdictLog log;
  std::error_code ec;
  if (!fs::exists(out, ec)) return log;
  auto lines = ReadVerdictLines(out, "anvil kernelbench");
  if (!lines.ok()) return lines.status();
  std::set<std::string> other_backend, infra;
  for (const VerdictLine& l : lines.value()) {
    std::string line_backend;
    const json j = l.ok ? json::parse(l.text) : json();
    auto rec = l.ok ? RecordFromVerdictLine(j, line_backend) : std::nullopt;
    if (!rec) {
      std::fprintf(stderr,
                   "anvil kernelbench: warning: %s:%d: not a verdict of a KernelBench-named candidate; "
                   "ignored\n",
                   out.c_str(), l.line);
    } else if (line_backend != backend || VerdictPolicyId(j) != policy_id) {
      other_backend.insert(rec->first);
    } else if (retry_infra && rec->second.status == "infra_error") {
      infra.insert(rec->first);
    } else {
      log.done[rec->first] = rec->second;
    }
  }
  for (const auto& name : other_backend) log.other_backend += log.done.count(name) == 0 ? 1 : 0;
  for (const auto& name : infra) log.infra_retried += log.done.count(name) == 0 ? 1 : 0;
  return log;
}

template <typename T>
void ListOnStderr(const std::vector<T>& items, const std::function<std::string(const T&)>& describe) {
  for (std::size_t i = 0; i < items.size() && i < kMaxListed; ++i) {
    std::fprintf(stderr, "  %s\n", describe(items[i]).c_str());
  }
  if (items.size() > kMaxListed) std::fprintf(stderr, "  ... and %zu more\n", items.size() - kMaxListed);
}

std::string Percent(double v) { return Fixed(v, 1) + "%"; }

// Three significant digits: CPU runs see speedups like 0.00439x.
std::string Geomean(const SpeedupMean& m) {
  if (m.samples == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3gx", m.geomean);
  return buf;
}

std::string SampleCount(const LevelMetrics& m) {
  return m.samples_min == m.samples_max ? std::to_string(m.samples_max)
                                        : std::to_string(m.samples_min) + "-" + std::to_string(m.samples_max);
}

void AddRow(TextTable& table, const std::string& label, const LevelMetrics& m) {
  std::vector<std::string> row = {label,
                                  std::to_string(m.problems),
                                  SampleCount(m),
                                  Percent(m.pass_at_1),
                                  Percent(m.pass_at_n),
                                  Percent(m.avg_at_n),
                                  Percent(m.faster_eager),
                                  Percent(m.faster_compile),
                                  Geomean(m.speedup_eager),
                                  Geomean(m.speedup_compile)};
  for (double p : kTableFastP) {
    std::string cell = "-";
    for (const auto& f : m.fast_p) {
      if (f.p == p) cell = Percent(100.0 * f.fraction);
    }
    row.push_back(cell);
  }
  table.Add(row);
}

std::vector<std::string> MetricsHeader() {
  std::vector<std::string> header = {
      "level",         "problems",       "N", "Pass@1", "Pass@N", "Avg@N", "Faster eager", "Faster compile",
      "geomean eager", "geomean compile"};
  for (double p : kTableFastP) header.push_back("fast_" + FastPLabel(p));
  return header;
}

// The samples that were the machine's failure, and the problems they left
// with none: the table's "over P of Q problems".
void PrintMachineFailures(const LevelMetrics& all) {
  if (all.unjudged == 0) return;
  std::printf(
      "note: %d sample(s) were the machine's failure (infra_error, server_error): left out of n, Avg@N and "
      "the Faster rates; Pass@k is over %d of %d problems",
      all.unjudged, all.problems_judged(), all.problems);
  if (all.unjudged_problems.empty()) {
    std::printf(".\n");
    return;
  }
  std::printf(", and the %zu left with no judged sample count as failing:\n", all.unjudged_problems.size());
  for (std::size_t i = 0; i < all.unjudged_problems.size() && i < kMaxListed; ++i) {
    std::printf("  %s\n", all.unjudged_problems[i].c_str());
  }
  if (all.unjudged_problems.size() > kMaxListed) {
    std::printf("  ... and %zu more\n", all.unjudged_problems.size() - kMaxListed);
  }
}

// Degenerate problems (their verdicts' task_degenerate): listed, and the
// table again without them.
void PrintDegenerate(const std::vector<SampleRecord>& records, const MetricsOptions& options) {
  const std::vector<std::string> degenerate = DegenerateProblems(records);
  if (degenerate.empty()) return;
  std::printf(
      "\nnote: %zu problem(s) are degenerate: no check of their outputs tells a kernel from one that computes "
      "nothing (docs/rules.md), so their verdicts say little:\n",
      degenerate.size());
  for (std::size_t i = 0; i < degenerate.size() && i < kMaxListed; ++i) std::printf("  %s\n", degenerate[i].c_str());
  if (degenerate.size() > kMaxListed) std::printf("  ... and %zu more\n", degenerate.size() - kMaxListed);
  const RunMetrics rest = ComputeMetrics(WithoutDegenerate(records), options);
  TextTable table(MetricsHeader());
  for (const auto& l : rest.levels) AddRow(table, std::to_string(l.level), l);
  AddRow(table, "all", rest.overall);
  std::printf("\nWithout the degenerate problems:\n\n%s", table.Render().c_str());
}

// The table, one row per level and one for the whole run, and the statuses line.
void PrintMetrics(const RunMetrics& metrics, const std::string& title) {
  TextTable table(MetricsHeader());
  for (const auto& l : metrics.levels) AddRow(table, std::to_string(l.level), l);
  AddRow(table, "all", metrics.overall);
  std::printf("\n%s\n\n%s", title.c_str(), table.Render().c_str());
  std::string statuses;
  for (const auto& [status, count] : metrics.overall.by_status) {
    statuses += (statuses.empty() ? "" : ", ") + status + " " + std::to_string(count);
  }
  std::printf("\nstatuses: %s\n", statuses.c_str());
}

void PrintTable(const RunMetrics& metrics, const std::string& run_dir, const KernelBenchRun& kb) {
  PrintMetrics(metrics, "KernelBench run " + run_dir);
  std::printf(
      "Faster: passed and speedup > %sx, share of all samples. geomean: over passing samples with a known "
      "speedup. fast_p: sample 0 of each problem, correct and speedup vs eager > p (KernelBench).\n",
      Fixed(metrics.options.faster_than, 2).c_str());
  const LevelMetrics& all = metrics.overall;
  if (!kb.missing.empty() || !kb.skipped.empty()) {
    std::size_t left_out = kb.skipped.size();
    for (const auto& m : kb.missing) left_out += m.files.size();
    std::printf(
        "note: %zu candidate file(s) left out (%zu problem(s) not found in %s, %zu file name(s) skipped); "
        "see the start of stderr.\n",
        left_out, kb.missing.size(), kb.problem_root.c_str(), kb.skipped.size());
  }
  if (all.sample0_missing > 0) {
    std::printf("note: %d problem(s) have no sample 0; fast_p counts them as failures.\n", all.sample0_missing);
  }
  if (all.speedup_unknown > 0) {
    std::printf(
        "note: %d passing sample(s) have no eager speedup (perf off or baseline failed); they count as "
        "not faster.\n",
        all.speedup_unknown);
  }
  PrintMachineFailures(all);
  auto infra = all.by_status.find("infra_error");
  if (infra != all.by_status.end()) std::printf("note: --retry-infra evaluates infra_error verdicts again.\n");
}

// The turns --turn names among a run's 1..turns: first, last, K or each.
Result<std::vector<int>> TurnsToShow(const std::string& turn, int turns) {
  if (turn == "each") {
    std::vector<int> all;
    for (int k = 1; k <= turns; ++k) all.push_back(k);
    return all;
  }
  if (auto k = NamedTurn(turn, turns); k.ok()) return std::vector<int>{k.value()};
  return Status::Error("--turn " + turn + ": expected first, last, each or a turn from 1 to " + std::to_string(turns));
}

// `--run RUN.db`: the metrics of a run database, per turn, from what it holds.
// It only reads: unjudged attempts are pending, and no --kernelbench root is needed.
int RunDatabase(const KernelbenchArgs& a) {
  auto db = RunDb::Open(a.run_dir, /*create=*/false, /*read_only=*/true);
  if (!db.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", db.message().c_str());
    return kExitUsage;
  }
  auto info = db.value()->Info();
  auto by_turn = RecordsByTurn(*db.value());
  if (!info.ok() || !by_turn.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s: %s\n", a.run_dir.c_str(),
                 (info.ok() ? by_turn.message() : info.message()).c_str());
    return kExitUsage;
  }
  auto shown = TurnsToShow(a.turn, static_cast<int>(by_turn.value().size()));
  if (!shown.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", shown.message().c_str());
    return kExitUsage;
  }
  if (a.json) {
    const json report = RunMetricsJson(info.value(), by_turn.value(), a.run_dir, shown.value(), a.faster_than);
    std::printf("%s\n", report.dump(2, ' ', false, json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  MetricsOptions mo;
  mo.faster_than = a.faster_than;
  for (int k : shown.value()) {
    const TurnRecords& t = by_turn.value()[k - 1];
    const RunMetrics metrics = ComputeMetrics(t.records, mo);
    PrintMetrics(metrics, "Run " + a.run_dir + " (" + info.value().model + ", " + info.value().prompt_id + ", " +
                              info.value().backend + "), turn " + std::to_string(k) + " of " +
                              std::to_string(by_turn.value().size()));
    if (t.pending > 0) {
      std::printf("note: %d sample(s) have no finished attempt by this turn (pending): they count as failures.\n",
                  t.pending);
    }
    PrintMachineFailures(metrics.overall);
    if (t.server_errors > 0) {
      std::printf("note: %d sample(s) ended in server_error; run anvil generate again to ask again.\n",
                  t.server_errors);
    }
    PrintDegenerate(t.records, mo);
  }
  std::printf(
      "\nAt turn K a sample counts as its best attempt in turns 1..K. Faster: passed and speedup > %sx, share "
      "of all samples. fast_p: sample 0 of each problem (KernelBench).\n",
      Fixed(a.faster_than, 2).c_str());
  return kExitOk;
}

int Run(const KernelbenchArgs& a) {
  std::error_code ec;
  if (fs::is_regular_file(a.run_dir, ec)) return RunDatabase(a);
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", backend.message().c_str());
    return kExitUsage;
  }
  auto options = ToEvalOptions(a);
  if (!options.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", options.message().c_str());
    return kExitUsage;
  }
  const fs::path root = a.kernelbench.empty() ? DefaultKernelBenchRoot() : fs::path(a.kernelbench);
  auto run = ReadKernelBenchRun(a.run_dir, root);
  if (!run.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", run.message().c_str());
    if (a.kernelbench.empty()) {
      std::fprintf(stderr,
                   "  (the problems are looked up in %s; pass --kernelbench ROOT or set "
                   "$ANVIL_KERNELBENCH)\n",
                   root.c_str());
    }
    return kExitUsage;
  }
  const KernelBenchRun& kb = run.value();
  if (!kb.skipped.empty()) {
    std::fprintf(stderr, "anvil kernelbench: %zu file(s) not evaluated:\n", kb.skipped.size());
    ListOnStderr<SkippedFile>(kb.skipped, [](const SkippedFile& f) { return f.file + ": " + f.reason; });
  }
  std::size_t missing_files = 0;
  for (const auto& m : kb.missing) missing_files += m.files.size();
  if (!kb.missing.empty()) {
    std::fprintf(stderr,
                 "anvil kernelbench: %zu problem(s) not found in %s; their %zu candidate(s) are left "
                 "out of the metrics:\n",
                 kb.missing.size(), kb.problem_root.c_str(), missing_files);
    ListOnStderr<MissingProblem>(kb.missing, [](const MissingProblem& m) {
      return "level " + std::to_string(m.level) + " problem " + std::to_string(m.problem) + ": " + m.reason;
    });
  }
  if (kb.jobs.empty()) {
    std::fprintf(stderr,
                 "anvil kernelbench: nothing to evaluate in %s (expected files named "
                 "level_{L}_problem_{P}_sample_{S}_kernel.{py,cu,cpp} answering problems in %s)\n",
                 a.run_dir.c_str(), kb.problem_root.c_str());
    return kExitUsage;
  }

  const fs::path out = a.out.empty() ? fs::path(a.run_dir) / kDefaultOutName : fs::path(a.out);
  auto log = ReadVerdictLog(out, backend.value().name(), options.value().policy.Id(), a.retry_infra);
  if (!log.ok()) {
    std::fprintf(stderr, "anvil kernelbench: %s\n", log.message().c_str());
    return kExitUsage;
  }
  if (log.value().other_backend > 0) {
    std::fprintf(stderr,
                 "anvil kernelbench: %d verdict(s) in %s were made with another backend or policy; evaluating "
                 "those candidates again on %s under %s\n",
                 log.value().other_backend, out.c_str(), backend.value().name().c_str(),
                 options.value().policy.Id().c_str());
  }
  if (log.value().infra_retried > 0) {
    std::fprintf(stderr, "anvil kernelbench: evaluating %d infra_error candidate(s) again (--retry-infra)\n",
                 log.value().infra_retried);
  }
  std::vector<Job> pending;
  std::vector<SampleId> pending_ids;
  std::vector<SampleRecord> records;
  for (const auto& j : kb.jobs) {
    auto it = log.value().done.find(j.job.candidate.filename().string());
    if (it != log.value().done.end()) {
      records.push_back(it->second);
    } else {
      pending.push_back(j.job);
      pending_ids.push_back(j.id);
    }
  }
  const std::size_t already = kb.jobs.size() - pending.size();
  if (!a.quiet) {
    std::fprintf(stderr, "anvil kernelbench: %zu candidates in %s; %zu already done (in %s); evaluating %zu on %s\n",
                 kb.jobs.size(), a.run_dir.c_str(), already, out.c_str(), pending.size(),
                 backend.value().name().c_str());
    if (!backend.value().HasDevice() && !pending.empty()) {
      std::fprintf(stderr,
                   "anvil kernelbench: no %s device on this machine: running the compile gate and the "
                   "static checks only\n",
                   backend.value().name().c_str());
    }
  }

  std::ofstream out_file(out, std::ios::app);
  if (!out_file) {
    std::fprintf(stderr, "anvil kernelbench: cannot write %s\n", out.c_str());
    return kExitUsage;
  }
  EvalOptions o = options.value();  // The Evaluator makes the cache path absolute.
  auto evaluators = MakeEvaluators(backend.value(), o, a.gpus);
  if (!evaluators.ok()) {
    std::fprintf(stderr, "anvil %s: %s\n", "kernelbench", evaluators.message().c_str());
    return kExitUsage;
  }

  const bool tty = isatty(STDERR_FILENO) != 0;
  std::size_t index = 0;
  auto on_verdict = [&](const Job& job, const Verdict& v, const Progress& p) {
    // Written and flushed at once: an interrupted run loses at most the verdict in flight.
    out_file << VerdictToJson(v, -1) << "\n" << std::flush;
    records.push_back(RecordFromVerdict(pending_ids[index++], v));
    if (a.quiet) return;
    double rate = p.elapsed_seconds > 0 ? p.done / p.elapsed_seconds : 0;
    double eta = rate > 0 ? (p.total - p.done) / rate : 0;
    std::fprintf(stderr, "%s[%zu/%zu] %-14s %s/%s  %.1f s  | %.2f/min, ETA %.0f s%s", tty ? "\r\033[K" : "", p.done,
                 p.total, StatusName(v.status), job.task.name.c_str(), job.candidate.filename().c_str(), v.seconds,
                 rate * 60, eta, tty && p.done < p.total ? "" : "\n");
    std::fflush(stderr);
  };
  RunJobs(evaluators.value().all, pending, ToBatchOptions(a, backend.value()), on_verdict);
  if (!out_file) {
    std::fprintf(stderr, "anvil kernelbench: writing %s failed\n", out.c_str());
    return kExitFailure;
  }

  MetricsOptions mo;
  mo.faster_than = a.faster_than;
  RunMetrics metrics = ComputeMetrics(records, mo);
  if (!a.json) {
    PrintTable(metrics, a.run_dir, kb);
    PrintDegenerate(records, mo);
    return kExitOk;
  }
  json levels = json::array();
  for (const auto& l : metrics.levels) levels.push_back(LevelJson(l));
  json skipped = json::array();
  for (const auto& f : kb.skipped) skipped.push_back({{"file", f.file}, {"reason", f.reason}});
  json missing = json::array();
  for (const auto& m : kb.missing) {
    missing.push_back({{"level", m.level}, {"problem", m.problem}, {"reason", m.reason}, {"files", m.files}});
  }
  json report = {{"run", a.run_dir},
                 {"kernelbench", kb.problem_root.string()},
                 {"out", out.string()},
                 {"backend", backend.value().name()},
                 {"faster_than", a.faster_than},
                 {"candidates", kb.jobs.size()},
                 {"already_done", already},
                 {"evaluated", pending.size()},
                 {"skipped_files", skipped},
                 {"missing_problems", missing},
                 {"levels", levels},
                 {"overall", LevelJson(metrics.overall)}};
  AddDegenerateJson(records, mo, report);
  std::printf("%s\n", report.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  return kExitOk;
}

}  // namespace

void RegisterKernelbench(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<KernelbenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "kernelbench",
      "Evaluate a KernelBench run folder (level_{L}_problem_{P}_sample_{S}_kernel.*) and report, per level,\n"
      "Pass@1, Pass@N, Avg@N, Faster Rate, geometric-mean speedups and fast_p. Resumable.");
  cmd->add_option("--run", args->run_dir,
                  "Run folder holding the generated candidates, or a run database of anvil generate (RUN.db: "
                  "read only, no --kernelbench needed)")
      ->required();
  cmd->add_option("--turn", args->turn, "For a run database: the turns to show: first, last, K or each")
      ->capture_default_str();
  cmd->add_option("--kernelbench", args->kernelbench,
                  "KernelBench problems: a folder with level1/, level2/, ... (default $ANVIL_KERNELBENCH, else "
                  "<anvil source>/../shared/kernelbench)");
  AddEvalFlags(cmd, *args);
  cmd->add_option("-o,--out", args->out,
                  "Verdict log (JSON lines), appended as verdicts come and read back on a rerun (default "
                  "RUN/anvil_verdicts.jsonl)");
  cmd->add_option("--faster-than", args->faster_than, "Faster Rate counts speedups above this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the metrics as one JSON object");
  cmd->add_flag("--retry-infra", args->retry_infra, "Evaluate again candidates whose logged verdict is infra_error");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
