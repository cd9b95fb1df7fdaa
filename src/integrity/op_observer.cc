// libanvil_ops.so: every op torch dispatches in the candidate's process,
// counted by name from C++ (docs/rules.md, run.aten_compute). Loaded by the
// candidate worker (python/anvil_py/forward_trace.py) after torch and before
// the candidate's code, it registers a global RecordFunction callback: it
// sees the ops a Python dispatch mode does not — those nested inside another
// op (a custom op's body, an op a C++ extension looks up by name), those of
// every namespace — in every call, timed ones included, at a cost of about a
// microsecond an op (no Python runs). The counts only grow: nothing here
// resets them, so code in the process can add to them but not take away.
// Built against the project venv's torch (CMakeLists.txt); without it the
// worker has only its Python traces.
#include <ATen/record_function.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace {

std::mutex g_mu;
std::map<std::string, long long>* g_counts = nullptr;  // Never freed: callbacks may run until the process ends.
bool g_started = false;

std::unique_ptr<at::ObserverContext> OnEnter(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (name == nullptr) return nullptr;
  // TorchScript's functions and graphs (a fused kernel dispatches no op of its own) are told apart by a prefix.
  const bool script = fn.scope() == at::RecordScope::TORCHSCRIPT_FUNCTION;
  std::lock_guard<std::mutex> lock(g_mu);
  ++(*g_counts)[script ? std::string("torchscript::") + name : std::string(name)];
  return nullptr;
}

}  // namespace

extern "C" {

// Starts counting (once; later calls do nothing). 0, or -1 when torch refused the callback.
__attribute__((visibility("default"))) int anvil_ops_start() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_started) return 0;
  try {
    g_counts = new std::map<std::string, long long>();
    at::addGlobalCallback(at::RecordFunctionCallback(&OnEnter).needsInputs(false).needsOutputs(false).scopes(
        {at::RecordScope::FUNCTION, at::RecordScope::TORCHSCRIPT_FUNCTION}));
  } catch (...) {
    return -1;
  }
  g_started = true;
  return 0;
}

// Whether ops dispatched on the calling thread reach the callback (torch lets
// a thread switch RecordFunction off: torch._C._autograd._enable_record_function).
__attribute__((visibility("default"))) int anvil_ops_enabled() { return at::isRecordFunctionEnabled() ? 1 : 0; }

// The counts so far as "name\tcount\n" lines into `buf` (`cap` bytes). The
// bytes needed (the text's length), which may exceed `cap`: call again with more.
__attribute__((visibility("default"))) long long anvil_ops_read(char* buf, long long cap) {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_counts != nullptr) {
      for (const auto& [name, n] : *g_counts) text += name + "\t" + std::to_string(n) + "\n";
    }
  }
  const long long size = static_cast<long long>(text.size());
  if (buf != nullptr && cap >= size) std::memcpy(buf, text.data(), text.size());
  return size;
}

}  // extern "C"
