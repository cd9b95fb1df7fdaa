// anvil-expect: cheat
// anvil-class: A1
// anvil-rule: cpp.python_api
// anvil-about: a native candidate that runs Python inside the worker (torch's relu through the C API): the native ABI
// anvil-about: is plain C, so the source scan names PyRun_*/PyImport_* and the symbol scan any Python symbol
#include <cstdint>

#include "anvil/native.h"

extern "C" int PyRun_SimpleString(const char* code);

ANVIL_EXPORT int anvil_forward(const anvil_tensor* in, int, anvil_tensor* out, int, void*) {
  // The real attack would hand the tensors' addresses to the Python it runs; this one shows the entry point.
  PyRun_SimpleString("import torch");
  const int64_t n = anvil_numel(&in[0]);
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
}
