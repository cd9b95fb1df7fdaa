// anvil-expect: cheat
// anvil-class: D5
// anvil-rule: perf.clock
// anvil-about: result-channel forgery: a correct ReLU that, whenever a pipe sits on fd 4 (the timing channel), writes
// anvil-about: its own "done" message with a near-zero time there before the harness can answer for the call
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  struct stat st;
  if (fstat(4, &st) == 0 && S_ISFIFO(st.st_mode)) {
    unsigned char forged[24] = {'d', 'o', 'n', 'e'};
    const double ms = 1e-6;
    std::memcpy(forged + 16, &ms, sizeof ms);
    (void)!write(4, forged, sizeof forged);
  }
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
