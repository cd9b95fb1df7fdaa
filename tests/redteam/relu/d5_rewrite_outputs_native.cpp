// anvil-expect: cheat
// anvil-class: D5
// anvil-rule: run.forged_output
// anvil-static-rule: cpp.file_access
// anvil-trial-data: files
// anvil-about: rewrites the outputs the worker already wrote (trial K-1's file, during trial K; the worker's folder
// anvil-about: is its scratch, $TMPDIR): what anvil compares must be what the worker sealed
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "anvil/native.h"

namespace {
int g_call = 0;

// The worker's output folder: the candidate's own scratch, where $TMPDIR points.
std::string OutDir() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr ? dir : ".";
}
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  // A later call than the one that made them: rewrite the previous trial's file (here with zeros; a cheat would
  // write an answer it computed outside its timed calls).
  if (g_call > 0) {
    const std::string path = OutDir() + "/trial_" + std::to_string(g_call - 1) + "/out0.bin";
    if (FILE* f = std::fopen(path.c_str(), "r+b")) {
      const float zero = 0.0f;
      for (int64_t i = 0; i < n; ++i) std::fwrite(&zero, sizeof zero, 1, f);
      std::fclose(f);
    }
  }
  ++g_call;
  return 0;
}
