#include "run/candidate_run.h"

#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/python.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace fs = std::filesystem;

namespace {
constexpr int kStderrTailLines = 25;
}  // namespace

Result<RunOutcome> RunCandidate(const Backend& backend, const RunRequest& request, int expected_trials) {
  std::error_code ec;
  fs::create_directories(request.out_dir, ec);
  if (ec) return Status::Error("cannot create " + request.out_dir.string() + ": " + ec.message());

  nlohmann::json builds = {{"extensions", nlohmann::json::object()}};
  for (const auto& [name, path] : request.artifacts) {
    if (name == "native") {
      builds["native"] = path;
    } else {
      builds["extensions"][name] = path;
    }
  }
  fs::path builds_file = request.out_dir / "builds.json";
  if (Status s = WriteFileAtomic(builds_file, builds.dump()); !s.ok()) return s;

  const bool perf = request.phase == RunPhase::kPerf;
  ProcessSpec spec = PythonWorkerSpec("candidate_worker", {"run",
                                                           "--candidate",
                                                           request.candidate.string(),
                                                           "--format",
                                                           request.format,
                                                           "--prepared",
                                                           request.prepared.string(),
                                                           "--device",
                                                           backend.TorchDevice(),
                                                           "--out",
                                                           request.out_dir.string(),
                                                           "--builds",
                                                           builds_file.string(),
                                                           "--phase",
                                                           perf ? "perf" : "trials",
                                                           "--warmup",
                                                           std::to_string(request.warmup),
                                                           "--iters",
                                                           std::to_string(request.iters),
                                                           "--recheck-sets",
                                                           std::to_string(request.recheck_sets)});
  std::unique_ptr<CallClock> clock;
  if (perf) {
    auto opened = CallClock::Open();
    if (!opened.ok()) return opened.status();
    clock = std::move(opened).value();
    spec.pass_fds = clock->ChildFds();
    spec.argv.push_back("--clock-fds");
    spec.argv.push_back("3,4");
    clock->Start(request.iters);
  }
  spec.deadline = request.deadline;
  spec.working_dir = request.out_dir.string();
  if (request.torch == nullptr) return Status::Error("RunCandidate: no torch info for the sandbox");
  CandidateAccess access;
  access.read = CandidateReadablePrepared(request.prepared);
  access.read.push_back(request.candidate);
  access.read.push_back(builds_file);
  for (const auto& [name, path] : request.artifacts) access.read.emplace_back(path);
  access.scratch = request.out_dir;
  access.hidden = CandidateHiddenPrepared(request.prepared);
  access.switches = request.sandbox_switches;
  auto sandbox = CandidateSandbox(*request.torch, access);
  if (!sandbox.ok()) return sandbox.status();
  spec.sandbox = sandbox.value();
  for (auto& kv : CandidateEnvironment(request.out_dir)) spec.env.push_back(std::move(kv));
  auto r = RunProcess(spec);
  RunOutcome out;
  if (clock) out.timed = clock->Finish();
  if (!r.ok()) return r.status();

  const ProcessResult& p = r.value();
  out.timed_out = p.timed_out;
  out.exit_code = p.exit_code;
  out.term_signal = p.timed_out ? 0 : p.term_signal;
  out.seconds = p.wall_seconds;
  out.sandbox_layers = p.sandbox_layers;
  out.stderr_tail = TailLines(p.err + p.out, kStderrTailLines);
  if (auto text = ReadFile(request.out_dir / "error.json"); text.ok()) {
    nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
    if (j.is_object()) {
      out.stage = j.value("stage", "");
      out.message = j.value("message", "");
      out.traceback = j.value("traceback", "");
    }
  }
  if (auto text = ReadFile(request.out_dir / "aten_ops.json"); text.ok()) {
    nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
    if (j.is_object() && j.contains("compute") && j["compute"].is_array()) {
      for (const auto& op : j["compute"]) {
        if (op.is_string()) out.aten_compute.push_back(op.get<std::string>());
      }
    }
  }
  while (out.trials_completed < expected_trials &&
         fs::exists(request.out_dir / ("trial_" + std::to_string(out.trials_completed)) / "tensors.json", ec)) {
    ++out.trials_completed;
  }
  bool wrote_all = true;
  if (perf) {
    // A broken protocol is judged by the caller (a cheat), not a failed run.
    wrote_all = static_cast<int>(out.timed.event_ms.size()) == request.iters || !out.timed.violation.empty();
  } else {
    wrote_all = out.trials_completed == expected_trials;
  }
  out.ok = p.Succeeded() && wrote_all;
  if (p.Succeeded() && !wrote_all && out.message.empty()) {
    out.stage = "exit";
    out.message = perf ? "the candidate's process exited before its timed calls were done (" +
                             std::to_string(out.timed.event_ms.size()) + " of " + std::to_string(request.iters) + ")"
                       : "the candidate's process exited before producing all outputs (" +
                             std::to_string(out.trials_completed) + " of " + std::to_string(expected_trials) +
                             " trials)";
  }
  return out;
}

}  // namespace anvil
