// A C++/CUDA text the candidate supplied, as the legal gate reads it: its
// name ("ext.cpp_sources[0]", a file name), its text, whether nvcc compiles
// it, and the -D/-U flags its build passes (the preprocessor of the scan must
// see what the compiler sees). Plain values.
#pragma once

#include <string>
#include <vector>

namespace anvil {

struct NativeSource {
  std::string name;
  std::string text;
  bool cuda = false;                 // Compiled by nvcc (__CUDACC__, a host and a device pass).
  std::vector<std::string> defines;  // "-DTORCH_EXTENSION_NAME=ext", "-DKERNEL=f", "-UNDEBUG".
};

using NativeSources = std::vector<NativeSource>;

}  // namespace anvil
