#include "compile/extract.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_fields.h"
#include "core/python.h"
#include "integrity/candidate_sandbox.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

ExtensionSpec ParseExtension(const nlohmann::json& e) {
  ExtensionSpec x;
  x.name = e.value("name", "");
  x.cpp_sources = JsonStrings(e, "cpp_sources");
  x.cuda_sources = JsonStrings(e, "cuda_sources");
  x.extra_cflags = JsonStrings(e, "extra_cflags");
  x.extra_cuda_cflags = JsonStrings(e, "extra_cuda_cflags");
  x.extra_ldflags = JsonStrings(e, "extra_ldflags");
  x.extra_include_paths = JsonStrings(e, "extra_include_paths");
  if (e.contains("with_cuda") && e["with_cuda"].is_boolean()) x.with_cuda = e["with_cuda"].get<bool>();
  x.key = e.value("key", "");
  const auto& f = e.contains("functions") ? e["functions"] : nlohmann::json();
  if (f.is_array()) {
    x.has_functions = true;
    for (const auto& n : f) {
      if (n.is_string()) x.functions.emplace_back(n.get<std::string>(), n.get<std::string>());
    }
  } else if (f.is_object()) {
    x.has_functions = true;
    for (const auto& [k, v] : f.items()) x.functions.emplace_back(k, v.is_string() ? v.get<std::string>() : k);
  }
  return x;
}

// "syntax error in relu.py line 12: invalid syntax" -> 12.
int SyntaxLine(const std::string& message) {
  auto pos = message.find(" line ");
  if (pos == std::string::npos) return 0;
  return std::atoi(message.c_str() + pos + 6);
}

}  // namespace

Result<Extraction> ExtractExtensions(const fs::path& candidate, const fs::path& init_args, const TorchInfo& torch,
                                     const std::string& sandbox_switches, std::chrono::seconds deadline,
                                     const JobQuota& quota) {
  auto tmp = MakeTempDir("anvil-extract-");
  if (!tmp.ok()) return tmp.status();
  fs::path out = tmp.value() / "extract.json";
  ProcessSpec spec =
      PythonWorkerSpec("candidate_worker", {"extract", "--candidate", candidate.string(), "--out", out.string()});
  if (!init_args.empty()) {
    spec.argv.push_back("--init");
    spec.argv.push_back(init_args.string());
  }
  spec.deadline = deadline;
  // The deadline counts from when the worker is ready to import the
  // candidate, as in the run gate (an exec'd worker imports torch first).
  ReadyPipe ready;
  if (Status s = ready.Attach(spec, "--ready-fd"); !s.ok()) {
    (void)RemoveTree(tmp.value());
    return s;
  }
  spec.working_dir = tmp.value().string();
  // Importing the candidate runs its code: sandboxed like the run gate. It
  // reads the task's init arguments and nothing else of the task.
  CandidateAccess access;
  access.read = {candidate};
  if (!init_args.empty()) access.read.push_back(init_args);
  access.scratch = tmp.value();
  access.switches = sandbox_switches;
  auto sandbox = CandidateSandbox(torch, access);
  if (!sandbox.ok()) {
    (void)RemoveTree(tmp.value());
    return sandbox.status();
  }
  spec.sandbox = sandbox.value();
  for (auto& kv : CandidateEnvironment(tmp.value())) spec.env.push_back(std::move(kv));
  std::shared_ptr<JobCgroup> group;
  if (quota.any()) {
    auto made = JobCgroup::Create(quota);
    if (!made.ok()) {
      (void)RemoveTree(tmp.value());
      return Status::Error("cannot keep the import's quotas: " + made.message());
    }
    group = std::move(made.value());
    spec.cgroup = group;
  }
  auto r = RunProcess(spec);
  const JobUsage usage = group ? group->Usage() : JobUsage{};
  group.reset();  // What the import left running dies here.
  spec.cgroup.reset();
  if (!r.ok()) {
    (void)RemoveTree(tmp.value());
    return r.status();
  }
  if (r.value().not_ready) {
    (void)RemoveTree(tmp.value());
    return Status::Error(
        NotReadyProblem("the extraction worker was not ready to import the candidate", spec, r.value()));
  }
  Extraction x;
  x.seconds = r.value().wall_seconds;
  x.stderr_tail = TailLines(r.value().err, 20);
  auto text = ReadFile(out);
  (void)RemoveTree(tmp.value());
  if (r.value().timed_out || r.value().term_signal != 0 || !text.ok()) {
    x.failed = true;
    x.timed_out = r.value().timed_out;
    x.term_signal = r.value().term_signal;
    x.sandbox_layers = r.value().sandbox_layers;
    x.stage = "import";
    x.message = "importing the candidate " + r.value().Describe();
    if (usage.oom_kills > 0) {
      x.stage = "memory_quota";
      x.message = "importing the candidate " + OverMemoryQuota(quota);
    }
    return x;
  }
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    // The file is in the candidate's own folder, written after its code ran
    // in the same process: whatever broke it, the candidate's code could
    // have. Its failure, never anvil's (issue 35: attribution).
    x.failed = true;
    x.stage = "import";
    x.message =
        "the extraction's record of the candidate (extract.json, in the candidate's own folder) is not "
        "valid JSON after importing it";
    x.sandbox_layers = r.value().sandbox_layers;
    return x;
  }
  if (j.contains("extensions") && j["extensions"].is_array()) {
    for (const auto& e : j["extensions"]) x.extensions.push_back(ParseExtension(e));
  }
  if (j.contains("tampered") && j["tampered"].is_object()) {
    x.tampered = JsonStrings(j["tampered"], "changed");
    x.tampered.push_back(j["tampered"].value("when", "while importing"));
  }
  if (j.contains("error") && j["error"].is_object()) {
    const auto& e = j["error"];
    x.failed = true;
    x.stage = e.value("stage", "import");
    x.message = e.value("message", "");
    x.traceback = e.value("traceback", "");
    x.syntax_error = x.message.rfind("syntax error", 0) == 0;
    if (x.syntax_error) x.syntax_line = SyntaxLine(x.message);
  }
  return x;
}

}  // namespace anvil
