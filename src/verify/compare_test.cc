#include "verify/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace anvil {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr Tolerance kExact = {0, 0};

template <typename T>
TensorView View(DType dtype, std::vector<int64_t> shape, const std::vector<T>& data) {
  return TensorView{dtype, std::move(shape), data.data()};
}

TensorView F32(const std::vector<float>& data) {
  return View(DType::kFloat32, {static_cast<int64_t>(data.size())}, data);
}

TEST(DTypeTest, NamesSizesAndParsing) {
  const std::vector<std::pair<const char*, std::size_t>> all = {
      {"float32", 4}, {"float64", 8}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8},
      {"int32", 4},   {"int16", 2},   {"int8", 1},    {"uint8", 1},    {"bool", 1}};
  for (const auto& [name, size] : all) {
    Result<DType> d = ParseDType(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(DTypeName(d.value()), name);
    EXPECT_EQ(DTypeSize(d.value()), size);
  }
  EXPECT_EQ(ParseDType("torch.bfloat16").value(), DType::kBFloat16);
  EXPECT_FALSE(ParseDType("complex64").ok());
  EXPECT_FALSE(ParseDType("").ok());
  EXPECT_FALSE(ParseDType("Float32").ok());
  EXPECT_TRUE(IsFloatingPoint(DType::kBFloat16));
  EXPECT_FALSE(IsFloatingPoint(DType::kBool));
}

TEST(DTypeTest, DefaultTolerances) {
  EXPECT_EQ(DefaultTolerance(DType::kFloat32).atol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kFloat32).rtol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kFloat64).atol, 1e-6);
  EXPECT_EQ(DefaultTolerance(DType::kFloat16).atol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kBFloat16).rtol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kInt64).atol, 0);
  EXPECT_EQ(DefaultTolerance(DType::kBool).rtol, 0);
  EXPECT_TRUE(DefaultTolerance(DType::kFloat32).nan_equal);
  // KernelBench's published leaderboard (v0.1) compared fp32 at 1e-2; integers stay exact under every policy.
  const Policy v01 = PolicyNamed("kernelbench-v0.1").value();
  EXPECT_EQ(DefaultTolerance(DType::kFloat32, v01).atol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kFloat32, v01).rtol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kInt32, v01).atol, 0);
  EXPECT_EQ(DefaultTolerance(DType::kFloat32, PolicyNamed("kernelbench").value()).atol, 1e-4);
}

TEST(NumElementsTest, ProductsAndInvalid) {
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({5, 0, 7}), 0);
  EXPECT_EQ(NumElements({-1, 2}), -1);
  EXPECT_EQ(NumElements({1LL << 40, 1LL << 40}), -1);
}

TEST(CompareTest, IdenticalTensorsPass) {
  const std::vector<float> x = {1, -2, 3.5f, 0};
  const CompareResult r = CompareTensors(F32(x), F32(x), Tolerance());
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.problem, "");
  EXPECT_EQ(r.elements, 4);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_EQ(r.first_mismatch, -1);
  EXPECT_TRUE(r.first_mismatch_index.empty());
  EXPECT_EQ(r.max_abs_error, 0);
}

TEST(CompareTest, AllcloseRuleIsRelativeToExpected) {
  // atol + rtol*|e| = 1e-4 + 1e-4 * 100 = 0.0101.
  const std::vector<float> e = {100, 1};
  EXPECT_TRUE(CompareTensors(F32(e), F32({100.01f, 1.0001f}), Tolerance()).ok);
  const CompareResult r = CompareTensors(F32(e), F32({100.02f, 1.0003f}), Tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "values");
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.first_mismatch, 0);
  EXPECT_FLOAT_EQ(static_cast<float>(r.expected_at_first), 100);
  EXPECT_FLOAT_EQ(static_cast<float>(r.actual_at_first), 100.02f);
}

TEST(CompareTest, ErrorStatistics) {
  const std::vector<float> e = {1, 2, 0, 4};
  const std::vector<float> a = {1.5f, 2, 0.25f, 4};
  const CompareResult r = CompareTensors(F32(e), F32(a), {0.3, 0});
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_DOUBLE_EQ(r.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(r.mean_abs_error, 0.75 / 4);
  EXPECT_DOUBLE_EQ(r.max_rel_error, 0.25 / kRelativeErrorFloor);
}

TEST(CompareTest, ShapeThenDtype) {
  const std::vector<float> x(6, 1.0f);
  CompareResult r = CompareTensors(View(DType::kFloat32, {2, 3}, x), View(DType::kFloat32, {3, 2}, x), Tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "shape");
  r = CompareTensors(View(DType::kFloat32, {2, 3}, x), View(DType::kFloat32, {6}, x), Tolerance());
  EXPECT_EQ(r.problem, "shape");
  const std::vector<int32_t> ints(6, 1);
  r = CompareTensors(View(DType::kFloat32, {2, 3}, x), View(DType::kInt32, {2, 3}, ints), Tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "dtype");
  r = CompareTensors(View(DType::kFloat32, {2, 3}, x), View(DType::kInt32, {3, 2}, ints), Tolerance());
  EXPECT_EQ(r.problem, "shape");
}

TEST(CompareTest, MatchingNonFiniteValuesPass) {
  const std::vector<float> e = {kNanF, kInfF, -kInfF, 1};
  const CompareResult r = CompareTensors(F32(e), F32({kNanF, kInfF, -kInfF, 1}), Tolerance());
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.mean_abs_error, 0);
}

TEST(CompareTest, UnderEqualNanFalseANanNeverMatches) {
  Tolerance tol = DefaultTolerance(DType::kFloat32, PolicyNamed("kernelbench").value());
  EXPECT_FALSE(tol.nan_equal);
  const CompareResult r = CompareTensors(F32({kNanF, kInfF, 1}), F32({kNanF, kInfF, 1}), tol);
  EXPECT_FALSE(r.ok);  // torch.allclose(equal_nan=False): the NaN fails, the infinity matches.
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.problem, "nan");
}

TEST(CompareTest, NanWhereFiniteExpected) {
  const CompareResult r = CompareTensors(F32({1, 2, 3}), F32({1, kNanF, kInfF}), Tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "nan");
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.nonfinite_mismatches, 2);
  EXPECT_EQ(r.first_mismatch, 1);
  EXPECT_TRUE(std::isnan(r.actual_at_first));
  EXPECT_EQ(r.max_abs_error, 0);  // Statistics cover finite pairs only.
}

TEST(CompareTest, WrongSignInfinity) {
  const CompareResult r = CompareTensors(F32({kInfF, 0}), F32({-kInfF, kNanF}), Tolerance());
  EXPECT_EQ(r.problem, "inf");
  EXPECT_EQ(r.actual_at_first, -kInf);
  EXPECT_EQ(r.mismatches, 2);
}

TEST(CompareTest, FiniteWhereNonFiniteExpectedIsAValueMismatch) {
  const CompareResult r = CompareTensors(F32({kNanF, kInfF}), F32({0, 1e30f}), Tolerance());
  EXPECT_EQ(r.problem, "values");
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.nonfinite_mismatches, 0);
}

TEST(CompareTest, ProblemIsTheFirstKindMet) {
  const CompareResult r = CompareTensors(F32({1, 2}), F32({5, kNanF}), Tolerance());
  EXPECT_EQ(r.problem, "values");
  EXPECT_EQ(r.nonfinite_mismatches, 1);
}

TEST(CompareTest, MultiDimensionalFirstMismatchIndex) {
  std::vector<float> e(24, 0.5f);
  std::vector<float> a = e;
  a[17] = 9;
  a[20] = 9;
  const CompareResult r =
      CompareTensors(View(DType::kFloat32, {2, 3, 4}, e), View(DType::kFloat32, {2, 3, 4}, a), Tolerance());
  EXPECT_EQ(r.first_mismatch, 17);
  EXPECT_EQ(r.first_mismatch_index, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(r.mismatches, 2);
}

TEST(CompareTest, ZeroElementsAndScalars) {
  const std::vector<float> none;
  EXPECT_TRUE(CompareTensors(View(DType::kFloat32, {0, 3}, none), View(DType::kFloat32, {0, 3}, none), Tolerance()).ok);
  const std::vector<float> one = {2}, other = {3};
  const CompareResult r = CompareTensors(View(DType::kFloat32, {}, one), View(DType::kFloat32, {}, other), Tolerance());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.elements, 1);
  EXPECT_EQ(r.first_mismatch, 0);
  EXPECT_TRUE(r.first_mismatch_index.empty());
}

TEST(CompareTest, Float64OverflowingDifferenceFails) {
  const std::vector<double> e = {-1e308}, a = {1e308};
  const CompareResult r =
      CompareTensors(View(DType::kFloat64, {1}, e), View(DType::kFloat64, {1}, a), DefaultTolerance(DType::kFloat64));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.problem, "values");
}

TEST(CompareTest, UnalignedData) {
  std::vector<unsigned char> buf(1 + 3 * sizeof(float));
  const float values[3] = {1, 2, 3};
  std::memcpy(buf.data() + 1, values, sizeof(values));
  const TensorView v{DType::kFloat32, {3}, buf.data() + 1};
  const CompareResult r = CompareTensors(v, F32({1, 2, 4}), kExact);
  EXPECT_EQ(r.first_mismatch, 2);
  EXPECT_EQ(r.expected_at_first, 3);
}

// Decodes one 16-bit pattern by forcing a mismatch against a different value.
double Decode16(DType dtype, uint16_t bits) {
  const uint16_t other = bits == 0x1234 ? 0x4321 : 0x1234;
  const std::vector<uint16_t> e = {bits}, a = {other};
  const CompareResult r = CompareTensors(View(dtype, {1}, e), View(dtype, {1}, a), kExact);
  return r.ok ? std::nan("") : r.expected_at_first;
}

TEST(CompareTest, Float16DecodingByHand) {
  EXPECT_EQ(Decode16(DType::kFloat16, 0x3c00), 1.0);
  EXPECT_EQ(Decode16(DType::kFloat16, 0xc000), -2.0);
  EXPECT_EQ(Decode16(DType::kFloat16, 0x7bff), 65504.0);
  EXPECT_EQ(Decode16(DType::kFloat16, 0x0400), std::ldexp(1.0, -14));     // Smallest normal.
  EXPECT_EQ(Decode16(DType::kFloat16, 0x0001), std::ldexp(1.0, -24));     // Smallest subnormal.
  EXPECT_EQ(Decode16(DType::kFloat16, 0x03ff), std::ldexp(1023.0, -24));  // Largest subnormal.
  EXPECT_EQ(Decode16(DType::kFloat16, 0x8001), -std::ldexp(1.0, -24));
  EXPECT_EQ(Decode16(DType::kFloat16, 0x3555), 0.333251953125);
  EXPECT_EQ(Decode16(DType::kFloat16, 0x7c00), kInf);
  EXPECT_EQ(Decode16(DType::kFloat16, 0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(Decode16(DType::kFloat16, 0x7e00)));
  EXPECT_TRUE(std::isnan(Decode16(DType::kFloat16, 0xfc01)));
  const double negative_zero = Decode16(DType::kFloat16, 0x8000);
  EXPECT_EQ(negative_zero, 0.0);
  EXPECT_TRUE(std::signbit(negative_zero));
}

#ifdef __FLT16_MAX__
TEST(CompareTest, Float16MatchesCompilerConversionForEveryPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t h = static_cast<uint16_t>(bits);
    _Float16 f16;
    std::memcpy(&f16, &h, sizeof(h));
    const double want = static_cast<double>(f16);
    const double got = Decode16(DType::kFloat16, h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << bits;
    } else {
      ASSERT_EQ(got, want) << std::hex << bits;
    }
  }
}
#endif

TEST(CompareTest, BFloat16DecodingAndTolerance) {
  EXPECT_EQ(Decode16(DType::kBFloat16, 0x3f80), 1.0);
  EXPECT_EQ(Decode16(DType::kBFloat16, 0x4049), 3.140625);
  EXPECT_EQ(Decode16(DType::kBFloat16, 0xc2f7), -123.5);
  EXPECT_EQ(Decode16(DType::kBFloat16, 0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(Decode16(DType::kBFloat16, 0x7f80), kInf);
  EXPECT_TRUE(std::isnan(Decode16(DType::kBFloat16, 0x7fc0)));
  // 1.0 vs 1.0078125 (next bf16): within 1e-2 + 1e-2.
  const std::vector<uint16_t> e = {0x3f80}, a = {0x3f81}, far = {0x3f90};
  EXPECT_TRUE(
      CompareTensors(View(DType::kBFloat16, {1}, e), View(DType::kBFloat16, {1}, a), DefaultTolerance(DType::kBFloat16))
          .ok);
  EXPECT_FALSE(CompareTensors(View(DType::kBFloat16, {1}, e), View(DType::kBFloat16, {1}, far),
                              DefaultTolerance(DType::kBFloat16))
                   .ok);
}

TEST(CompareTest, Float16Tolerance) {
  const std::vector<uint16_t> e = {0x3c00}, a = {0x3c01};  // 1.0 vs 1 + 2^-10.
  const CompareResult r =
      CompareTensors(View(DType::kFloat16, {1}, e), View(DType::kFloat16, {1}, a), DefaultTolerance(DType::kFloat16));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.max_abs_error, std::ldexp(1.0, -10));
}

TEST(CompareTest, Int64ComparedWithoutRounding) {
  const std::vector<int64_t> e = {1LL << 62, std::numeric_limits<int64_t>::min()};
  const std::vector<int64_t> a = {(1LL << 62) + 1, std::numeric_limits<int64_t>::max()};
  const CompareResult r =
      CompareTensors(View(DType::kInt64, {2}, e), View(DType::kInt64, {2}, a), DefaultTolerance(DType::kInt64));
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.problem, "values");
  EXPECT_EQ(r.max_abs_error, std::ldexp(1.0, 64));  // 2^64 - 1 rounded.
}

TEST(CompareTest, SmallIntegersAndTolerance) {
  const std::vector<int8_t> e = {-128, 5}, a = {127, 5};
  CompareResult r = CompareTensors(View(DType::kInt8, {2}, e), View(DType::kInt8, {2}, a), kExact);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.max_abs_error, 255);
  EXPECT_EQ(r.expected_at_first, -128);
  const std::vector<uint8_t> ue = {200, 7}, ua = {201, 7};
  r = CompareTensors(View(DType::kUInt8, {2}, ue), View(DType::kUInt8, {2}, ua), kExact);
  EXPECT_EQ(r.mismatches, 1);
  r = CompareTensors(View(DType::kUInt8, {2}, ue), View(DType::kUInt8, {2}, ua), {1, 0});
  EXPECT_TRUE(r.ok);
  const std::vector<int16_t> se = {-300}, sa = {-300};
  EXPECT_TRUE(CompareTensors(View(DType::kInt16, {1}, se), View(DType::kInt16, {1}, sa), kExact).ok);
  const std::vector<int32_t> ie = {7, 8}, ia = {7, 9};
  r = CompareTensors(View(DType::kInt32, {1, 2}, ie), View(DType::kInt32, {1, 2}, ia), kExact);
  EXPECT_EQ(r.first_mismatch_index, (std::vector<int64_t>{0, 1}));
}

TEST(CompareTest, BoolNormalizesNonzeroBytes) {
  const std::vector<uint8_t> e = {1, 0, 1}, a = {2, 0, 0};
  const CompareResult r = CompareTensors(View(DType::kBool, {3}, e), View(DType::kBool, {3}, a), kExact);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_mismatch, 2);
}

TEST(CompareTest, LargeTensorCountsEveryMismatch) {
  constexpr int64_t kCount = 1 << 20;
  std::vector<float> e(kCount), a(kCount);
  for (int64_t i = 0; i < kCount; ++i) e[i] = a[i] = static_cast<float>(i % 1000) * 0.001f;
  for (int64_t i = 0; i < kCount; i += 1024) a[i] += 1;
  const CompareResult r = CompareTensors(F32(e), F32(a), Tolerance());
  EXPECT_EQ(r.mismatches, kCount / 1024);
  EXPECT_EQ(r.first_mismatch, 0);
  EXPECT_NEAR(r.max_abs_error, 1.0, 1e-6);
}

TEST(CompareTest, SplitAcrossThreadsMatchesOnePass) {
  // Enough elements for several threads; mismatches only in the second half,
  // so the first mismatch's index must be offset by its chunk's start.
  constexpr int64_t kCount = (int64_t{1} << 23) + 12345;
  std::vector<float> e(kCount), a(kCount);
  for (int64_t i = 0; i < kCount; ++i) e[i] = a[i] = 1.0f + static_cast<float>(i % 97) * 0.01f;
  const int64_t first = kCount / 2 + 7;
  a[first] = 5.0f;
  a[kCount - 1] = std::nanf("");
  a[kCount - 2] += 0.5f;
  const CompareResult r = CompareTensors(F32(e), F32(a), Tolerance());
  EXPECT_EQ(r.mismatches, 3);
  EXPECT_EQ(r.nonfinite_mismatches, 1);
  EXPECT_EQ(r.first_mismatch, first);
  EXPECT_EQ(r.problem, "values");
  EXPECT_NEAR(r.expected_at_first, e[first], 1e-6);
  EXPECT_NEAR(r.actual_at_first, 5.0, 1e-6);
  EXPECT_NEAR(r.max_abs_error, 5.0 - e[first], 1e-5);
  EXPECT_NEAR(r.mean_abs_error, ((5.0 - e[first]) + 0.5) / static_cast<double>(kCount - 1), 1e-9);
}

}  // namespace
}  // namespace anvil
