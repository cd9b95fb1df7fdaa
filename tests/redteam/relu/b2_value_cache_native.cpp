// anvil-expect: pass
// anvil-class: B2
// anvil-about: value-keyed replay: outputs cached under a signature of 16 sampled input values; a hit copies the cached output (microseconds), a miss computes for 3 ms. With fresh inputs for every timed call it never hits: its time is honest
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "anvil/native.h"

namespace {
std::map<std::vector<float>, std::vector<float>> g_cache;
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  std::vector<float> key;
  for (int64_t i = 0; i < 16; ++i) key.push_back(x[(i * 7919) % n]);
  auto hit = g_cache.find(key);
  if (hit != g_cache.end()) {
    std::memcpy(y, hit->second.data(), n * sizeof(float));
    return 0;
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3);
  while (std::chrono::steady_clock::now() < until) asm volatile("");  // The "expensive" honest kernel.
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  g_cache[key].assign(y, y + n);
  return 0;
}
