// anvil-expect: cheat
// anvil-class: D7
// anvil-rule: cpp.l2_persist
// anvil-about: pastes the persisting-L2 attribute's name together (CUDA's cudaStreamAttributeAccessPolicyWindow), so
// anvil-about: the scan of the text as written never sees it; the scan after the preprocessor does. (Stand-ins for
// anvil-about: CUDA's names keep it a CPU build; on a GPU the kernel trace would also see the persisting window.)
#include <cstdint>

#include "anvil/native.h"

#define ANVIL_PASTE(a, b) a##b

namespace {
enum StreamAttribute { ANVIL_PASTE(cudaStreamAttribute, AccessPolicyWindow) = 1 };
int pinned = 0;
void SetAttribute(StreamAttribute a) { pinned = a; }
}  // namespace

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  SetAttribute(ANVIL_PASTE(cudaStreamAttribute, AccessPolicyWindow));
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < anvil_numel(&in[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
