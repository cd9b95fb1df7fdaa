// The correctness check: compares a candidate's output tensor with the
// reference's, element by element on raw little-endian bytes, inside the
// trusted process (torch.allclose semantics plus NaN/Inf rules). Views borrow
// their data; the caller keeps it alive. All functions are pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "verify/policy.h"

namespace anvil {

enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt16, kInt8, kUInt8, kBool };

// "float32", ..., "bool" (docs/protocol.md); a leading "torch." is accepted.
// Error for any other name.
Result<DType> ParseDType(std::string_view torch_name);
// The protocol name, e.g. "bfloat16".
std::string_view DTypeName(DType dtype);
// Bytes per element: 4 8 2 2 8 4 2 1 1 1.
std::size_t DTypeSize(DType dtype);
bool IsFloatingPoint(DType dtype);

// Product of the dimensions (1 for a 0-d tensor); -1 when a dimension is
// negative or the product overflows int64.
int64_t NumElements(const std::vector<int64_t>& shape);

// Element i passes when |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double atol = 1e-4;  // Absolute part.
  double rtol = 1e-4;  // Relative part, scaled by |expected|.
  // A NaN matches a NaN of the reference at the same place (false: it never
  // matches, as torch.allclose's equal_nan=False).
  bool nan_equal = true;
};

// The policy's tolerance for `dtype` (musacoder: fp32 1e-4/1e-4, fp64
// 1e-6/1e-6, fp16 and bf16 1e-2/1e-2); integers and bool exact.
Tolerance DefaultTolerance(DType dtype, const Policy& policy = Policy());

// A contiguous row-major tensor. `data` holds NumElements(shape) elements.
struct TensorView {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  const void* data = nullptr;  // Borrowed; alignment not required.
};

// Relative errors divide by max(|expected|, kRelativeErrorFloor).
inline constexpr double kRelativeErrorFloor = 1e-12;

struct CompareResult {
  bool ok = false;
  // First kind of problem met: "" (none), "shape", "dtype", or for the first
  // mismatching element "nan" / "inf" (the actual value is NaN / ±Inf) or "values".
  std::string problem;
  int64_t mismatches = 0;
  int64_t elements = 0;
  int64_t nonfinite_mismatches = 0;  // Mismatches whose actual value is NaN or ±Inf.
  // Error statistics over the elements where both values are finite.
  double max_abs_error = 0;
  double max_rel_error = 0;
  double mean_abs_error = 0;
  int64_t first_mismatch = -1;                // Flat index; -1 when none.
  std::vector<int64_t> first_mismatch_index;  // Same, one index per dimension.
  double expected_at_first = 0;               // May be NaN/Inf.
  double actual_at_first = 0;                 // May be NaN/Inf.
};

// Compares in one pass without per-element allocation. Shape must match
// exactly, then dtype. A non-finite actual value passes only where the
// expected value is the same non-finite value (NaN with NaN, +Inf with +Inf).
// Integer and bool tensors are compared as integers: a difference never
// rounds to zero, so a zero tolerance means exact equality.
CompareResult CompareTensors(const TensorView& expected, const TensorView& actual, Tolerance tol);

}  // namespace anvil
