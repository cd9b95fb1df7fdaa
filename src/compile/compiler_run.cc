#include "compile/compiler_run.h"

#include <map>
#include <mutex>

#include "core/subprocess.h"

namespace anvil {

constexpr std::size_t kCompilerLogCap = 4 << 20;

ProcessSpec CompilerProcessSpec(std::vector<std::string> argv, std::chrono::milliseconds deadline,
                                const CompilerSandbox& box) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.deadline = deadline;
  spec.output_cap = kCompilerLogCap;
  spec.max_file_bytes = kCompilerMaxFileBytes;
  spec.nice = kCompilerNice;
  spec.env = {{"LC_ALL", "C"}};
  if (!box.temp_dir().empty()) spec.env.emplace_back("TMPDIR", box.temp_dir().string());
  spec.sandbox = box.sandbox();
  spec.cgroup = box.cgroup();
  return spec;
}

Result<CompilerRun> RunCompiler(const std::vector<std::string>& argv, std::chrono::seconds deadline,
                                const CompilerSandbox& box) {
  auto r = RunProcess(CompilerProcessSpec(argv, deadline, box));
  if (!r.ok()) {
    return Status::Error(r.message() +
                         " — is the toolchain installed? (scripts/setup.sh installs g++; nvcc comes "
                         "with the CUDA toolkit)");
  }
  CompilerRun run;
  run.ok = r.value().Succeeded();
  run.timed_out = r.value().timed_out;
  run.seconds = r.value().wall_seconds;
  run.log = r.value().out + r.value().err;
  if (run.timed_out) run.log += "\n[anvil] compiler timed out after " + std::to_string(deadline.count()) + " s\n";
  return run;
}

std::string CompilerIdentity(const std::string& compiler) {
  static std::mutex mu;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mu);
  auto it = memo.find(compiler);
  if (it != memo.end()) return it->second;
  ProcessSpec spec;
  spec.argv = {compiler, "--version"};
  spec.deadline = std::chrono::seconds(30);
  std::string id;
  if (auto r = RunProcess(spec); r.ok() && r.value().Succeeded()) id = r.value().out;
  memo[compiler] = id;
  return id;
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    line += a.find(' ') == std::string::npos ? a : "'" + a + "'";
  }
  return line;
}

}  // namespace anvil
