// anvil's slim <torch/extension.h> (see ../README.md): torch's <torch/types.h>
// (tensors, dtypes, the torch:: factories) without the C++ frontend or pybind11.
#pragma once

#include <torch/types.h>
