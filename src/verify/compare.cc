#include "verify/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

namespace anvil {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
  bool floating;
};

constexpr std::array<DTypeInfo, 10> kDTypes = {{
    {DType::kFloat32, "float32", 4, true},
    {DType::kFloat64, "float64", 8, true},
    {DType::kFloat16, "float16", 2, true},
    {DType::kBFloat16, "bfloat16", 2, true},
    {DType::kInt64, "int64", 8, false},
    {DType::kInt32, "int32", 4, false},
    {DType::kInt16, "int16", 2, false},
    {DType::kInt8, "int8", 1, false},
    {DType::kUInt8, "uint8", 1, false},
    {DType::kBool, "bool", 1, false},
}};

constexpr std::string_view kTorchPrefix = "torch.";
constexpr Tolerance kExactTolerance = {0, 0};

// IEEE binary16 layout.
constexpr uint32_t kHalfSignMask = 0x8000;
constexpr int kHalfExponentShift = 10;
constexpr uint32_t kHalfExponentMask = 0x1f;
constexpr uint32_t kHalfMantissaMask = 0x3ff;
constexpr uint32_t kHalfExponentMax = 0x1f;
constexpr int kHalfToFloatExponentBias = 127 - 15;
constexpr float kHalfSubnormalUnit = 1.0f / (1 << 24);  // 2^-24.
// IEEE binary32 layout.
constexpr int kFloatExponentShift = 23;
constexpr int kFloatMantissaGap = 23 - 10;  // Mantissa bits float has over half.
constexpr uint32_t kFloatExponentAllOnes = 0xffu << kFloatExponentShift;
constexpr int kSignShift = 16;  // Half/bf16 sign bit to float sign bit.

const DTypeInfo& Info(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info;
  }
  std::abort();  // Unreachable: every enumerator is in kDTypes.
}

template <typename T>
inline T Load(const unsigned char* base, int64_t i) {
  T value;
  std::memcpy(&value, base + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
  return value;
}

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & kHalfSignMask) << kSignShift;
  const uint32_t exponent = (h >> kHalfExponentShift) & kHalfExponentMask;
  const uint32_t mantissa = h & kHalfMantissaMask;
  if (exponent == 0) {  // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * kHalfSubnormalUnit;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == kHalfExponentMax) {  // Inf or NaN (payload kept).
    return BitsToFloat(sign | kFloatExponentAllOnes | (mantissa << kFloatMantissaGap));
  }
  return BitsToFloat(sign | ((exponent + kHalfToFloatExponentBias) << kFloatExponentShift) |
                     (mantissa << kFloatMantissaGap));
}

inline float BFloat16ToFloat(uint16_t b) { return BitsToFloat(uint32_t{b} << kSignShift); }

// Every half value decoded once (256 KiB); a load beats the branches in the hot loop.
constexpr std::size_t kHalfPatterns = 1 << 16;
struct HalfTable {
  HalfTable() {
    for (std::size_t h = 0; h < kHalfPatterns; ++h) values[h] = HalfToFloat(static_cast<uint16_t>(h));
  }
  std::array<float, kHalfPatterns> values;
};

const float* HalfValues() {
  static const HalfTable table;  // Thread-safe initialization; trivially destructible.
  return table.values.data();
}

// Running state of one comparison; the hot loops only touch it on mismatches
// and for the error sums.
struct Accumulator {
  int64_t mismatches = 0;
  int64_t nonfinite_mismatches = 0;
  int64_t finite_pairs = 0;
  double sum_abs_error = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t first_mismatch = -1;
  double expected_at_first = 0;
  double actual_at_first = 0;
  const char* first_problem = "";

  void Mismatch(int64_t i, double e, double a) {
    ++mismatches;
    const bool nonfinite = !std::isfinite(a);
    if (nonfinite) ++nonfinite_mismatches;
    if (first_mismatch >= 0) return;
    first_mismatch = i;
    expected_at_first = e;
    actual_at_first = a;
    first_problem = std::isnan(a) ? "nan" : (nonfinite ? "inf" : "values");
  }
};

// Floating point: both decoded to double (exact for every supported type).
template <typename Raw, typename Decode>
void CompareFloating(const unsigned char* expected, const unsigned char* actual, int64_t n, Tolerance tol,
                     Decode decode, Accumulator* acc) {
  double sum = 0;
  double max_abs = 0;
  double max_rel = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = decode(Load<Raw>(expected, i));
    const double a = decode(Load<Raw>(actual, i));
    if (std::isfinite(e) && std::isfinite(a)) {
      const double diff = std::fabs(a - e);
      const double mag = std::fabs(e);
      ++finite;
      sum += diff;
      max_abs = diff > max_abs ? diff : max_abs;
      const double rel = diff / (mag > kRelativeErrorFloor ? mag : kRelativeErrorFloor);
      max_rel = rel > max_rel ? rel : max_rel;
      // Written so that an overflowing diff (inf) fails too.
      if (!(diff <= tol.atol + tol.rtol * mag)) acc->Mismatch(i, e, a);
    } else {
      const bool same = (tol.nan_equal && std::isnan(e) && std::isnan(a)) || e == a;
      if (!same) acc->Mismatch(i, e, a);
    }
  }
  acc->sum_abs_error = sum;
  acc->max_abs_error = max_abs;
  acc->max_rel_error = max_rel;
  acc->finite_pairs = finite;
}

// Integers (and bool, normalized to 0/1): the difference is taken in unsigned
// 64-bit arithmetic so it can neither overflow nor round to zero.
template <typename Raw>
void CompareIntegral(const unsigned char* expected, const unsigned char* actual, int64_t n, Tolerance tol, bool is_bool,
                     Accumulator* acc) {
  double sum = 0;
  double max_abs = 0;
  double max_rel = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t e = static_cast<int64_t>(Load<Raw>(expected, i));
    int64_t a = static_cast<int64_t>(Load<Raw>(actual, i));
    if (is_bool) {
      e = e != 0;
      a = a != 0;
    }
    if (e == a) continue;
    const uint64_t udiff = a > e ? static_cast<uint64_t>(a) - static_cast<uint64_t>(e)
                                 : static_cast<uint64_t>(e) - static_cast<uint64_t>(a);
    const double diff = static_cast<double>(udiff);
    const double mag = std::fabs(static_cast<double>(e));
    sum += diff;
    max_abs = diff > max_abs ? diff : max_abs;
    const double rel = diff / (mag > kRelativeErrorFloor ? mag : kRelativeErrorFloor);
    max_rel = rel > max_rel ? rel : max_rel;
    if (!(diff <= tol.atol + tol.rtol * mag)) {
      acc->Mismatch(i, static_cast<double>(e), static_cast<double>(a));
    }
  }
  acc->sum_abs_error = sum;
  acc->max_abs_error = max_abs;
  acc->max_rel_error = max_rel;
  acc->finite_pairs = n;
}

// One contiguous range of elements of `dtype`.
void CompareRange(DType dtype, const unsigned char* e, const unsigned char* a, int64_t n, Tolerance tol,
                  Accumulator* acc) {
  switch (dtype) {
    case DType::kFloat32:
      CompareFloating<float>(
          e, a, n, tol, [](float v) { return static_cast<double>(v); }, acc);
      break;
    case DType::kFloat64:
      CompareFloating<double>(
          e, a, n, tol, [](double v) { return v; }, acc);
      break;
    case DType::kFloat16:
      CompareFloating<uint16_t>(
          e, a, n, tol, [table = HalfValues()](uint16_t v) { return static_cast<double>(table[v]); }, acc);
      break;
    case DType::kBFloat16:
      CompareFloating<uint16_t>(
          e, a, n, tol, [](uint16_t v) { return static_cast<double>(BFloat16ToFloat(v)); }, acc);
      break;
    case DType::kInt64:
      CompareIntegral<int64_t>(e, a, n, tol, false, acc);
      break;
    case DType::kInt32:
      CompareIntegral<int32_t>(e, a, n, tol, false, acc);
      break;
    case DType::kInt16:
      CompareIntegral<int16_t>(e, a, n, tol, false, acc);
      break;
    case DType::kInt8:
      CompareIntegral<int8_t>(e, a, n, tol, false, acc);
      break;
    case DType::kUInt8:
      CompareIntegral<uint8_t>(e, a, n, tol, false, acc);
      break;
    case DType::kBool:
      CompareIntegral<uint8_t>(e, a, n, tol, true, acc);
      break;
  }
}

// Large tensors (outputs of GBs) are split across threads; the result is the
// same as one pass: counts and sums add, maxima take the max, and the first
// mismatch is the one of the earliest chunk that has one.
constexpr int64_t kMinElementsPerThread = int64_t{1} << 22;
constexpr unsigned kMaxCompareThreads = 16;

Accumulator CompareParallel(DType dtype, const unsigned char* e, const unsigned char* a, int64_t n, Tolerance tol) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int64_t by_size = std::max<int64_t>(1, n / kMinElementsPerThread);
  const int64_t threads = std::min<int64_t>({by_size, hw, kMaxCompareThreads});
  if (threads <= 1) {
    Accumulator acc;
    CompareRange(dtype, e, a, n, tol, &acc);
    return acc;
  }
  const std::size_t size = DTypeSize(dtype);
  std::vector<Accumulator> parts(static_cast<std::size_t>(threads));
  std::vector<int64_t> starts(static_cast<std::size_t>(threads) + 1);
  for (int64_t t = 0; t <= threads; ++t) starts[static_cast<std::size_t>(t)] = n * t / threads;
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = starts[static_cast<std::size_t>(t)];
    const int64_t count = starts[static_cast<std::size_t>(t) + 1] - begin;
    const std::size_t offset = static_cast<std::size_t>(begin) * size;
    pool.emplace_back(CompareRange, dtype, e + offset, a + offset, count, tol, &parts[static_cast<std::size_t>(t)]);
  }
  for (auto& th : pool) th.join();
  Accumulator acc;
  for (std::size_t t = 0; t < parts.size(); ++t) {
    const Accumulator& p = parts[t];
    acc.mismatches += p.mismatches;
    acc.nonfinite_mismatches += p.nonfinite_mismatches;
    acc.finite_pairs += p.finite_pairs;
    acc.sum_abs_error += p.sum_abs_error;
    acc.max_abs_error = std::max(acc.max_abs_error, p.max_abs_error);
    acc.max_rel_error = std::max(acc.max_rel_error, p.max_rel_error);
    if (acc.first_mismatch < 0 && p.first_mismatch >= 0) {
      acc.first_mismatch = starts[t] + p.first_mismatch;
      acc.expected_at_first = p.expected_at_first;
      acc.actual_at_first = p.actual_at_first;
      acc.first_problem = p.first_problem;
    }
  }
  return acc;
}

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

}  // namespace

Result<DType> ParseDType(std::string_view torch_name) {
  std::string_view name = torch_name;
  if (name.starts_with(kTorchPrefix)) name.remove_prefix(kTorchPrefix.size());
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return Status::Error("unsupported dtype '" + std::string(torch_name) + "'");
}

std::string_view DTypeName(DType dtype) { return Info(dtype).name; }

std::size_t DTypeSize(DType dtype) { return Info(dtype).size; }

bool IsFloatingPoint(DType dtype) { return Info(dtype).floating; }

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return -1;
    if (dim != 0 && n > std::numeric_limits<int64_t>::max() / dim) return -1;
    n *= dim;
  }
  return n;
}

Tolerance DefaultTolerance(DType dtype, const Policy& policy) {
  Tolerance tol = kExactTolerance;
  switch (dtype) {
    case DType::kFloat32:
      tol = {policy.float32_tol, policy.float32_tol};
      break;
    case DType::kFloat64:
      tol = {policy.float64_tol, policy.float64_tol};
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      tol = {policy.half_tol, policy.half_tol};
      break;
    default:
      break;
  }
  tol.nan_equal = policy.nan_equal;
  return tol;
}

CompareResult CompareTensors(const TensorView& expected, const TensorView& actual, Tolerance tol) {
  CompareResult result;
  const int64_t n = NumElements(expected.shape);
  result.elements = n < 0 ? 0 : n;
  if (n < 0 || expected.shape != actual.shape) {
    result.problem = "shape";
    return result;
  }
  if (expected.dtype != actual.dtype) {
    result.problem = "dtype";
    return result;
  }
  if (n > 0 && (expected.data == nullptr || actual.data == nullptr)) std::abort();

  const auto* e = static_cast<const unsigned char*>(expected.data);
  const auto* a = static_cast<const unsigned char*>(actual.data);
  const Accumulator acc = CompareParallel(expected.dtype, e, a, n, tol);

  result.mismatches = acc.mismatches;
  result.nonfinite_mismatches = acc.nonfinite_mismatches;
  result.max_abs_error = acc.max_abs_error;
  result.max_rel_error = acc.max_rel_error;
  result.mean_abs_error = acc.finite_pairs > 0 ? acc.sum_abs_error / static_cast<double>(acc.finite_pairs) : 0;
  result.ok = acc.mismatches == 0;
  if (!result.ok) {
    result.problem = acc.first_problem;
    result.first_mismatch = acc.first_mismatch;
    result.first_mismatch_index = Unravel(acc.first_mismatch, expected.shape);
    result.expected_at_first = acc.expected_at_first;
    result.actual_at_first = acc.actual_at_first;
  }
  return result;
}

}  // namespace anvil
