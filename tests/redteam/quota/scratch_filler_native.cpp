// anvil-expect: runtime_error
// anvil-about: fills its scratch folder (the only one it may write, $TMPDIR) before any output, 1 MiB at a time,
// anvil-about: bounded at 2 GiB: the folder is in memory, so its memory quota stops it, not the machine's disk
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int n_in, anvil_tensor* out, int n_out, void* /*stream*/) {
  if (n_in != 1 || n_out != 1) return 1;
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr) return 2;
  const std::vector<char> chunk(1 << 20, 'x');
  for (int file = 0; file < 16; ++file) {
    std::FILE* f = std::fopen((std::string(dir) + "/fill_" + std::to_string(file)).c_str(), "wb");
    if (f == nullptr) return 3;
    for (int mib = 0; mib < 128; ++mib) {
      if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) return 4;
    }
    std::fclose(f);
  }
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return 0;
}
