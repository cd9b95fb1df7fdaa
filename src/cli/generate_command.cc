// `anvil generate`: a served model writes kernels for tasks; anvil records
// every answer in a run database and judges every candidate. Resumable: run
// the same command again. Exit 0 when the run is done, 1 when it stopped
// early (server unreachable, token budget; resumable), 2 for bad usage.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/torch_info.h"
#include "cli/commands.h"
#include "cli/eval_flags.h"
#include "cli/model_flags.h"
#include "cli/table.h"
#include "core/environment.h"
#include "gen/endpoint.h"
#include "gen/generate.h"
#include "gen/openai_client.h"
#include "gen/prompt.h"
#include "runs/run_db.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

struct GenerateArgs : EvalFlags, ModelFlags {
  std::string model;
  std::string tasks;
  std::string out;
  int samples = 1;
  int turns = 1;
  std::string history = "full";
  bool optimize = false;
  double target_speedup = 1.1;
  double alpha = 0.75;  // PrimeEcho.
  std::optional<double> bonus_first, bonus_second;
  std::string format = "kernelbench";
  std::string prompt = kDefaultPromptId;
  std::string levels;
  std::string problems;
  std::optional<double> temperature, top_p;
  std::optional<int> max_tokens;
  bool max_completion_tokens = false;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  bool logprobs = false;
  std::optional<int> top_logprobs;
  bool return_token_ids = false;
  int concurrency = 16;
  int n_per_request = 1;
  std::optional<int64_t> max_total_tokens;
  bool dry_run = false;
  bool no_verdict_cache = false;
};

constexpr const char* kMe = "anvil generate";

int Usage(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kMe, message.c_str());
  return kExitUsage;
}

// "1,3-5" -> {1, 3, 4, 5}. Error for anything else.
Result<std::set<int64_t>> ParseNumbers(const std::string& text, const char* flag) {
  std::set<int64_t> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(at, end - at);
    try {
      std::size_t used = 0;
      const int64_t first = std::stoll(part, &used);
      int64_t last = first;
      if (used < part.size()) {
        if (part[used] != '-') throw std::invalid_argument(part);
        std::size_t more = 0;
        last = std::stoll(part.substr(used + 1), &more);
        if (used + 1 + more != part.size()) throw std::invalid_argument(part);
      }
      if (last < first || last - first > 100000) throw std::invalid_argument(part);
      for (int64_t n = first; n <= last; ++n) out.insert(n);
    } catch (const std::exception&) {
      return Status::Error(std::string(flag) + " '" + text + "': expected numbers and ranges, e.g. 1,3-5");
    }
    at = end + 1;
  }
  return out;
}

// The tasks under --tasks, less those --levels and --problems leave out.
Result<std::vector<Task>> SelectTasks(const GenerateArgs& a) {
  auto found = DiscoverTasks(a.tasks);
  if (!found.ok()) return found.status();
  std::optional<std::set<int64_t>> levels, problems;
  if (!a.levels.empty()) {
    auto l = ParseNumbers(a.levels, "--levels");
    if (!l.ok()) return l.status();
    levels = l.value();
  }
  if (!a.problems.empty()) {
    auto p = ParseNumbers(a.problems, "--problems");
    if (!p.ok()) return p.status();
    problems = p.value();
  }
  std::vector<Task> tasks;
  for (Task& t : found.value()) {
    if (levels && !levels->count(t.level)) continue;
    const auto number = ProblemNumber(t.name);
    if (problems && (!number || !problems->count(*number))) continue;
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) return Status::Error("no task in " + a.tasks + " matches --levels/--problems");
  return tasks;
}

std::string SamplingJson(const SamplingParams& s) {
  nlohmann::json j = nlohmann::json::object();
  if (s.temperature) j["temperature"] = *s.temperature;
  if (s.top_p) j["top_p"] = *s.top_p;
  if (s.max_tokens) j[s.max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = *s.max_tokens;
  if (s.seed) j["seed"] = *s.seed;
  if (!s.stop.empty()) j["stop"] = s.stop;
  if (s.logprobs) j["logprobs"] = true;
  if (s.top_logprobs) j["top_logprobs"] = *s.top_logprobs;
  if (s.return_token_ids) j["return_token_ids"] = true;
  return j.dump();
}

// What a resumed run must keep. The policy only when it is not the default:
// runs made before there were policies were musacoder's.
std::string ConfigJson(const GenerateArgs& a) {
  nlohmann::json j = {
      {"format", a.format},     {"trials", a.trials},   {"perf", !a.no_perf},     {"baselines", a.baselines},
      {"held_out", a.held_out}, {"history", a.history}, {"optimize", a.optimize}, {"target_speedup", a.target_speedup}};
  if (a.policy != Policy().name) j["policy"] = a.policy;
  if (a.bonus_first) {
    j["prime_echo"] = {{"alpha", a.alpha}, {"bonus_first", *a.bonus_first}, {"bonus_second", *a.bonus_second}};
  }
  return j.dump();
}

// One line of progress on stderr: rewritten in place on a terminal, else at most every 10 s.
class ProgressLine {
 public:
  explicit ProgressLine(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO) == 1) {}
  void Show(const GenerateProgress& p) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!tty_ && now - last_ < std::chrono::seconds(10)) return;
    last_ = now;
    const double rate = p.elapsed_seconds > 0 ? static_cast<double>(p.completion_tokens) / p.elapsed_seconds : 0;
    // The time left for the work known now (repair turns add to it).
    const int64_t done = p.generated + p.judged, known = p.to_generate + p.to_judge;
    std::string eta = "";
    if (done > 0 && known > done) {
      const int seconds = static_cast<int>(p.elapsed_seconds * static_cast<double>(known - done) / done);
      eta = "  ETA " + (seconds >= 60 ? std::to_string(seconds / 60) + "m" : "") + std::to_string(seconds % 60) + "s";
    }
    std::fprintf(stderr, "%sgenerated %lld/%lld  judged %lld/%lld  passed %lld  %lld tokens (%.0f tok/s)%s%s",
                 tty_ ? "\r" : "", static_cast<long long>(p.generated), static_cast<long long>(p.to_generate),
                 static_cast<long long>(p.judged), static_cast<long long>(p.to_judge), static_cast<long long>(p.passed),
                 static_cast<long long>(p.completion_tokens), rate, eta.c_str(), tty_ ? "   " : "\n");
    shown_ = true;
  }
  void End() {
    if (shown_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  bool quiet_, tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

void PrintSummary(RunDb& db, const GenerateSummary& s) {
  auto attempts = db.Attempts();
  if (!attempts.ok()) return;
  std::map<std::string, int64_t> by_outcome;
  int64_t pending = 0;
  for (const AttemptRow& a : attempts.value()) {
    if (a.state != AttemptState::kDone) {
      ++pending;
    } else {
      ++by_outcome[a.outcome.value_or("?")];
    }
  }
  TextTable table({"outcome", "attempts"});
  for (const char* o : {"pass", "compile_error", "runtime_error", "timeout", "wrong_answer", "cheat", "no_code",
                        "truncated", "refused", "server_error", "infra_error"}) {
    if (by_outcome.count(o)) table.Add({o, std::to_string(by_outcome[o])});
  }
  if (pending > 0) table.Add({"pending", std::to_string(pending)});
  table.Add({"total", std::to_string(attempts.value().size())});
  std::printf("%s", table.Render().c_str());
  std::printf(
      "this time: %lld request(s), %lld answered, %lld judged (%lld from the verdict cache), %lld "
      "completion tokens",
      static_cast<long long>(s.asked), static_cast<long long>(s.answered), static_cast<long long>(s.judged),
      static_cast<long long>(s.cached), static_cast<long long>(s.completion_tokens));
  if (s.reopened > 0)
    std::printf("; %lld machine failure(s) of an earlier run redone", static_cast<long long>(s.reopened));
  std::printf("\n");
}

int Run(const GenerateArgs& a) {
  if (a.turns < 1) return Usage("--turns must be at least 1");
  if (a.history != "full" && a.history != "last") return Usage("--history must be full or last");
  if (a.bonus_first.has_value() != a.bonus_second.has_value()) {
    return Usage("give both PrimeEcho bonuses (--bonus-first and --bonus-second) or neither");
  }
  if (a.alpha < 0 || a.alpha > 1) return Usage("--alpha is PrimeEcho's weight of the first turn, in [0, 1]");
  if (a.format != "kernelbench" && a.format != "native") return Usage("--format must be kernelbench or native");
  if (a.samples < 1) return Usage("--samples must be at least 1");
  if (a.n_per_request < 1) return Usage("--n-per-request must be at least 1");
  const fs::path cache_dir = a.cache_dir.empty() ? DefaultCacheDir() : fs::path(a.cache_dir);
  auto prompt = LoadPrompt(a.prompt);
  if (!prompt.ok()) return Usage(prompt.message());
  auto tasks = SelectTasks(a);
  if (!tasks.ok()) return Usage(tasks.message());
  ChatRequest request;
  request.model = a.model;
  request.sampling.temperature = a.temperature;
  request.sampling.top_p = a.top_p;
  request.sampling.max_tokens = a.max_tokens;
  request.sampling.max_completion_tokens = a.max_completion_tokens;
  request.sampling.seed = a.seed;
  request.sampling.stop = a.stop;
  request.sampling.logprobs = a.logprobs || a.top_logprobs.has_value();
  request.sampling.top_logprobs = a.top_logprobs;
  request.sampling.return_token_ids = a.return_token_ids;
  if (a.dry_run) {
    auto first = FirstTurnPrompts(prompt.value(), {tasks.value().front()}, a.backend, a.format, cache_dir);
    if (!first.ok()) return Usage(first.message());
    const std::vector<ChatMessage>& messages = first.value().begin()->second;
    const std::size_t per_task = (a.samples + a.n_per_request - 1) / a.n_per_request;
    std::printf("%zu task(s) x %d sample(s): %zu first-turn request(s) to send, prompt %s v%d; the first:\n\n",
                tasks.value().size(), a.samples, tasks.value().size() * per_task, prompt.value().id.c_str(),
                prompt.value().version);
    for (const ChatMessage& m : messages) std::printf("--- %s ---\n%s\n\n", m.role.c_str(), m.content.c_str());
    return kExitOk;
  }
  if (a.out.empty()) return Usage("--out RUN.db is required (the run database; an existing one is resumed)");
  auto setup = ToModelSetup(a, cache_dir);
  if (!setup.ok()) return Usage(setup.message());
  auto backend = Backend::FromName(a.backend);
  if (!backend.ok()) return Usage(backend.message());
  auto eval_options = ToEvalOptions(a);
  if (!eval_options.ok()) return Usage(eval_options.message());

  std::error_code ec;
  if (const fs::path parent = fs::path(a.out).parent_path(); !parent.empty()) fs::create_directories(parent, ec);
  auto db = RunDb::Open(a.out, /*create=*/true);
  if (!db.ok()) return Usage(db.message());
  RunInfo info;
  info.model = a.model;
  info.endpoint = RecordedEndpoint(setup.value().client.endpoint);
  info.prompt_id = prompt.value().id;
  info.prompt_version = prompt.value().version;
  info.backend = backend.value().name();
  info.samples = a.samples;
  info.turns = a.turns;
  info.sampling_json = SamplingJson(request.sampling);
  info.config_json = ConfigJson(a);
  auto run = db.value()->BeginRun(info);
  if (!run.ok()) return Usage(a.out + ": " + run.message());
  auto recorded = db.value()->Tasks();
  if (!recorded.ok()) return Usage(recorded.message());
  if (const std::string diff = TaskSetDifference(recorded.value(), tasks.value()); !diff.empty()) {
    return Usage(a.out +
                 " holds a run of other tasks; pose the same tasks, or start a new run with another --out:" + diff);
  }

  auto evaluators = MakeEvaluators(backend.value(), eval_options.value(), a.gpus);
  if (!evaluators.ok()) return Usage(evaluators.message());
  OpenAiClient client(setup.value().client);

  GenerateOptions options;
  options.request = request;
  options.format = a.format;
  options.backend = backend.value().name();
  options.samples = a.samples;
  options.turns = a.turns;
  options.history = a.history;
  options.repair.optimize = a.optimize;
  options.repair.target_speedup = a.target_speedup;
  if (a.bonus_first) options.prime_echo = PrimeEchoOptions{a.alpha, *a.bonus_first, *a.bonus_second};
  options.concurrency = a.concurrency;
  options.n_per_request = a.n_per_request;
  options.max_total_tokens = a.max_total_tokens;
  fs::path candidates = a.out;
  candidates.replace_extension(".candidates");
  options.candidates_dir = fs::absolute(candidates);
  options.cache_dir = cache_dir;
  options.batch = ToBatchOptions(a, backend.value());
  std::unique_ptr<VerdictCache> verdict_cache;
  if (!a.no_verdict_cache) {
    auto torch = LoadTorchInfo(options.cache_dir);
    if (torch.ok()) {
      verdict_cache = std::make_unique<VerdictCache>(options.cache_dir);
      options.verdict_cache = verdict_cache.get();
      options.verdict_key.options = VerdictOptionsFingerprint(eval_options.value());
      options.verdict_key.backend = backend.value().name();
      options.verdict_key.device_model = backend.value().DeviceModel();
      options.verdict_key.torch_version = torch.value().torch_version;
    } else {
      std::fprintf(stderr, "%s: no verdict cache (%s): every candidate is judged\n", kMe, torch.message().c_str());
    }
  }
  Generator generator(*db.value(), client, prompt.value(), evaluators.value().all, options);
  ProgressLine progress(a.quiet);
  auto summary = generator.Run(tasks.value(), [&](const GenerateProgress& p) { progress.Show(p); });
  progress.End();
  (void)db.value()->Checkpoint();
  if (!summary.ok()) {
    std::fprintf(stderr, "%s: %s\n", kMe, summary.message().c_str());
    return kExitFailure;
  }
  PrintSummary(*db.value(), summary.value());
  if (summary.value().stopped) {
    std::fprintf(stderr,
                 "%s: stopped early: %s\nEverything recorded so far is kept in %s: run the same command again "
                 "to go on.\n",
                 kMe, summary.value().stop_reason.c_str(), a.out.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void RegisterGenerate(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Have a served model (any OpenAI-compatible endpoint) write kernels for tasks, and judge them");
  cmd->add_option("--model", args->model, "The model name the server serves")->required();
  cmd->add_option("--tasks", args->tasks, "A task file, a level folder or a KernelBench tree (level1/, ...)")
      ->required();
  cmd->add_option("-o,--out", args->out, "The run database (SQLite); an existing one is resumed");
  cmd->add_option("-n,--samples", args->samples, "Samples per task")->capture_default_str();
  cmd->add_option("--turns", args->turns,
                  "Turns per sample at most: a sample that has not passed is asked again with the verifier's "
                  "feedback")
      ->capture_default_str();
  cmd->add_option("--history", args->history, "What a repair request holds: every earlier turn (full) or the last")
      ->capture_default_str();
  cmd->add_flag("--optimize", args->optimize,
                "Go on past a pass while the kernel is slower than --target-speedup (vs eager)");
  cmd->add_option("--target-speedup", args->target_speedup, "With --optimize: the speedup vs eager to reach")
      ->capture_default_str();
  cmd->add_option("--bonus-first", args->bonus_first,
                  "Record each sample's PrimeEcho score (docs/rl.md), with this bonus when turn 1 passed (the "
                  "paper gives no value)");
  cmd->add_option("--bonus-second", args->bonus_second, "PrimeEcho: the bonus when turn 2 was the first to pass");
  cmd->add_option("--alpha", args->alpha, "PrimeEcho: the first turn's weight")->capture_default_str();
  cmd->add_option("--format", args->format, "Candidate format asked for: kernelbench or native")->capture_default_str();
  cmd->add_option("--prompt", args->prompt, "Prompt id (a folder of prompts/)")->capture_default_str();
  cmd->add_option("--levels", args->levels, "Only these levels, e.g. 1,2");
  cmd->add_option("--problems", args->problems, "Only these problem numbers, e.g. 1-10,19");
  cmd->add_option("--temperature", args->temperature, "Sampling temperature (default: the server's)");
  cmd->add_option("--top-p", args->top_p, "Nucleus sampling (default: the server's)");
  cmd->add_option("--max-tokens", args->max_tokens, "Completion tokens per answer at most");
  cmd->add_flag("--max-completion-tokens", args->max_completion_tokens,
                "Send the limit as max_completion_tokens (OpenAI's newer models) instead of max_tokens");
  cmd->add_option("--seed", args->seed, "Sampling seed");
  cmd->add_option("--stop", args->stop, "Stop sequence (repeatable)");
  cmd->add_flag("--logprobs", args->logprobs, "Ask for and record each sampled token's log-prob (for the RL parts)");
  cmd->add_option("--top-logprobs", args->top_logprobs, "Alternatives per token with --logprobs");
  cmd->add_flag("--return-token-ids", args->return_token_ids, "Ask for and record the token ids (vLLM)");
  cmd->add_option("--concurrency", args->concurrency, "Requests in flight")->capture_default_str();
  cmd->add_option("--n-per-request", args->n_per_request,
                  "Ask for up to this many of a task's first-turn samples in one request (the protocol's n); "
                  "repair turns are asked one by one")
      ->capture_default_str();
  cmd->add_option("--max-total-tokens", args->max_total_tokens,
                  "A budget of completion tokens for the run; no request is sent once it is used up");
  cmd->add_flag("--dry-run", args->dry_run, "Print the first prompt and the number of requests; send nothing");
  cmd->add_flag("--no-verdict-cache", args->no_verdict_cache,
                "Judge every candidate, also one judged before with the same settings");
  AddModelFlags(cmd, *args, "--request-timeout");
  AddEvalFlags(cmd, *args);
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace anvil
