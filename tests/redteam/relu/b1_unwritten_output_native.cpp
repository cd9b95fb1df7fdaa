// anvil-expect: wrong_answer
// anvil-class: B1
// anvil-about: allocator reuse: writes nothing and hopes the output buffer still holds the reference result (it holds NaN)
#include <cstdint>
#include <cstring>

#include "anvil/native.h"

ANVIL_EXPORT int anvil_forward(const anvil_tensor*, int, anvil_tensor*, int, void*) { return 0; }
