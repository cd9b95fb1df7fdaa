#include "core/python.h"

#include <cstdlib>

#include "core/environment.h"

namespace anvil {

ProcessSpec PythonWorkerSpec(const std::string& module, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {PythonExecutable(), "-m", "anvil_py." + module};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.python_module = "anvil_py." + module;
  spec.env = {{"PYTHONPATH", PythonPackageDir().string()},
              {"PYTHONDONTWRITEBYTECODE", "1"},
              {"PYTHONUNBUFFERED", "1"},
              {"PYTHONWARNINGS", "ignore"}};
  if (const auto timer = TimerLibrary(); !timer.empty()) spec.env.emplace_back("ANVIL_TIMER_LIB", timer.string());
  if (const auto ops = OpsLibrary(); !ops.empty()) spec.env.emplace_back("ANVIL_OPS_LIB", ops.string());
  return spec;
}

namespace {

// $`variable`, else `file` next to this executable; empty when missing.
std::filesystem::path WorkerLibrary(const char* variable, const char* file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const char* set = std::getenv(variable);
  fs::path lib =
      set != nullptr && *set != '\0' ? fs::path(set) : fs::read_symlink("/proc/self/exe", ec).parent_path() / file;
  return fs::is_regular_file(lib, ec) ? fs::absolute(lib, ec) : fs::path();
}

}  // namespace

std::filesystem::path TimerLibrary() { return WorkerLibrary("ANVIL_TIMER_LIB", "libanvil_timer.so"); }

std::filesystem::path OpsLibrary() { return WorkerLibrary("ANVIL_OPS_LIB", "libanvil_ops.so"); }

std::string TailLines(const std::string& text, int max_lines) {
  if (max_lines <= 0) return "";
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == ' ')) --end;
  std::size_t pos = end;
  int lines = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++lines == max_lines) break;
    --pos;
  }
  return text.substr(pos, end - pos);
}

std::string NotReadyProblem(const std::string& what, const ProcessSpec& spec, const ProcessResult& result) {
  return what + " after " + std::to_string(spec.ready_allowance.count() / 1000) +
         " s (its start: Python and torch imports): the machine is overloaded, or the worker's start hangs; " +
         TailLines(result.err + result.out, 5);
}

}  // namespace anvil
