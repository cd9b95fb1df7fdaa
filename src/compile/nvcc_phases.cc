#include "compile/nvcc_phases.h"

#include <algorithm>
#include <cstdlib>
#include <future>
#include <regex>
#include <sstream>

#include "compile/compiler_run.h"
#include "compile/host_pch.h"
#include "core/files.h"
#include "core/subprocess.h"

namespace anvil {
namespace fs = std::filesystem;
namespace {

constexpr char kPhasesNote[] = "[anvil] nvcc's host front end and device steps ran at once (src/compile/nvcc_phases.h)";

// The program a dry-run line runs: its first word, quotes and $VAR/ dropped.
std::string Program(const std::string& line) {
  std::string word = line.substr(0, line.find(' '));
  word.erase(std::remove(word.begin(), word.end(), '"'), word.end());
  return fs::path(word).filename().string();
}

// `--module_id_file_name "<path>"` in a dry-run line, or "".
std::string ModuleIdFile(const std::string& line) {
  static const std::regex kFlag("--module_id_file_name \"([^\"]+)\"");
  std::smatch m;
  return std::regex_search(line, m, kFlag) ? m[1].str() : "";
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A chain of dry-run lines as one `sh -c` script: stops at the first failure.
std::string Script(const NvccPhases& phases, const std::vector<std::string>& lines) {
  std::string script = "set -e\n";
  for (const auto& [name, value] : phases.env) script += "export " + name + "=" + ShellQuote(value) + "\n";
  for (const auto& line : lines) {
    // nvcc ignores a failed clean-up, silently (a file the other phase
    // removed first); so does this.
    script += (Program(line) == "rm" ? line + " 2>/dev/null || true" : line) + "\n";
  }
  return script;
}

Result<ProcessResult> RunScript(const std::string& script, std::chrono::steady_clock::time_point end,
                                const CompilerSandbox& box) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
  return RunProcess(CompilerProcessSpec({"/bin/sh", "-c", script}, std::max(left, std::chrono::milliseconds(1)), box));
}

}  // namespace

std::optional<NvccPhases> ParseNvccDryRun(const std::string& dry_run_err) {
  static const std::regex kSimpleEnv("^([A-Za-z_][A-Za-z0-9_]*)=([^ \"']*)\\s*$");
  static const std::regex kAnyEnv("^[A-Za-z_][A-Za-z0-9_]*=.*$");
  NvccPhases phases;
  std::vector<std::string> commands;
  std::istringstream in(dry_run_err);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#$ ", 0) != 0) continue;
    line = line.substr(3);
    std::smatch m;
    if (std::regex_match(line, m, kSimpleEnv)) {
      phases.env.emplace_back(m[1].str(), m[2].str());
    } else if (!std::regex_match(line, kAnyEnv)) {
      commands.push_back(line);
    }
    // Other assignments (INCLUDES="..." "...") are nvcc's own bookkeeping; the
    // commands carry those flags spelled out.
  }
  // host preprocessor, cudafe++, device steps (cicc at least), host compiler.
  if (commands.size() < 4 || Program(commands[1]) != "cudafe++") return std::nullopt;
  if (commands[0].find(" -E ") == std::string::npos) return std::nullopt;
  if (commands[1].find("--gen_module_id_file ") == std::string::npos) return std::nullopt;
  phases.module_id_file = ModuleIdFile(commands[1]);
  if (phases.module_id_file.empty()) return std::nullopt;
  phases.final = commands.back();
  if (phases.final.find(" -c ") == std::string::npos || Program(phases.final) == "cudafe++") return std::nullopt;
  bool cicc_reads_it = false;
  for (std::size_t i = 2; i + 1 < commands.size(); ++i) {
    const std::string program = Program(commands[i]);
    if (program == "cudafe++" || program == "nvlink") return std::nullopt;  // Not one plain compile.
    if (program == "cicc" && ModuleIdFile(commands[i]) == phases.module_id_file.string()) cicc_reads_it = true;
    phases.device.push_back(commands[i]);
  }
  if (!cicc_reads_it) return std::nullopt;
  std::string cudafe = commands[1];
  cudafe.erase(cudafe.find("--gen_module_id_file "), std::string("--gen_module_id_file ").size());
  phases.host = {commands[0], cudafe};
  return phases;
}

Result<CompilerRun> RunNvccInPhases(const std::vector<std::string>& argv, const fs::path& temp_dir,
                                    std::chrono::seconds deadline, const CompilerSandbox& box,
                                    const HostPchUse& host_pch) {
  if (const char* off = std::getenv("ANVIL_NVCC_PHASES"); off != nullptr && std::string(off) == "0") {
    return RunCompiler(argv, deadline, box);
  }
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + deadline;
  std::error_code ec;
  fs::create_directories(temp_dir, ec);
  std::vector<std::string> dry_argv = argv;
  dry_argv.push_back("-dryrun");
  ProcessSpec dry = CompilerProcessSpec(std::move(dry_argv), std::chrono::seconds(30), box);
  dry.env.emplace_back("TMPDIR", temp_dir.string());
  auto listed = RunProcess(dry);
  std::optional<NvccPhases> phases;
  if (listed.ok() && listed.value().Succeeded()) phases = ParseNvccDryRun(listed.value().err);
  if (!phases) {
    (void)RemoveTree(temp_dir);
    return RunCompiler(argv, deadline, box);
  }

  // Any name both front ends agree on will do. It names the translation
  // unit's anonymous namespace in cudafe++'s output, so it is the same for
  // every build: then the torch part of that output is too, and can be
  // precompiled (compile/host_pch.h). Each extension is a shared object of
  // its own, and the names it forms are hidden in it.
  const std::string id = "_anvil_7_cuda_cu";
  if (Status s = WriteFileAtomic(phases->module_id_file, id); !s.ok()) return s;
  auto host = std::async(std::launch::async, [&] { return RunScript(Script(*phases, phases->host), end, box); });
  auto device = RunScript(Script(*phases, phases->device), end, box);
  auto front = host.get();
  CompilerRun run;
  if (front.ok()) run.step_seconds["nvcc_host_front"] = front.value().wall_seconds;
  if (device.ok()) run.step_seconds["nvcc_device"] = device.value().wall_seconds;
  run.log = std::string(kPhasesNote) + "\n";
  bool ok = front.ok() && device.ok();
  if (!front.ok()) run.log += "[anvil] " + front.message() + "\n";
  if (!device.ok()) run.log += "[anvil] " + device.message() + "\n";
  if (ok) {
    // As nvcc: the host front end's messages; the device steps' only if it got
    // that far (the shared front end repeats the host's errors otherwise).
    run.log += front.value().out + front.value().err;
    if (front.value().Succeeded()) run.log += device.value().out + device.value().err;
    run.timed_out = front.value().timed_out || device.value().timed_out;
    ok = front.value().Succeeded() && device.value().Succeeded();
  }
  if (ok) {
    auto run_line = [&](const std::string& line, const fs::path& also_writing) -> Result<ProcessResult> {
      if (also_writing.empty()) return RunScript(Script(*phases, {line}), end, box);
      auto wider = box.With({}, {also_writing});
      if (!wider.ok()) return wider.status();
      return RunScript(Script(*phases, {line}), end, wider.value());
    };
    Result<ProcessResult> last = Status::Error("");
    if (host_pch.cache != nullptr && host_pch.first_own_line > 0) {
      HostCompile host = RunHostCompile(phases->final, host_pch.first_own_line, *host_pch.cache, run_line);
      run.log += host.log;
      if (host.use == "built") run.step_seconds["nvcc_host_pch"] = host.pch_seconds;
      last = std::move(host.run);
    } else {
      last = run_line(phases->final, {});
    }
    if (!last.ok()) return last.status();
    run.step_seconds["nvcc_host_compile"] = last.value().wall_seconds;
    run.log += last.value().out + last.value().err;
    run.timed_out = last.value().timed_out;
    ok = last.value().Succeeded();
  }
  (void)RemoveTree(temp_dir);
  run.ok = ok;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (run.timed_out) run.log += "\n[anvil] compiler timed out after " + std::to_string(deadline.count()) + " s\n";
  return run;
}

}  // namespace anvil
