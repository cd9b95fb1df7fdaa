// The trusted side's comparison in torch (python/anvil_py/compare_torch.py)
// agrees with CompareTensors field for field, over random cases of every
// dtype with NaNs, infinities, extremes and values on both sides of the
// tolerance, compared in chunks of 1,000 elements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "core/python.h"
#include "core/temp_dir_fixture.h"
#include "verify/compare.h"
#include "verify/tensor_dir.h"

namespace anvil {
namespace {

class CompareTorchTest : public TempDirTest {};

// Bytes of `n` random values of `dtype`, and a perturbed copy of them.
struct Pair {
  std::string expected, actual;
};

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

uint16_t ToHalfBits(float f, bool bf16) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (bf16) return static_cast<uint16_t>(bits >> 16);
  // Through a value a half holds exactly: small integers over 2^k, or a special.
  if (std::isnan(f)) return 0x7e00;
  if (std::isinf(f)) return f > 0 ? 0x7c00 : 0xfc00;
  const int sign = f < 0 ? 0x8000 : 0;
  const float a = std::fabs(f);
  if (a >= 65504.0f) return static_cast<uint16_t>(sign | 0x7bff);
  int e;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  if (a == 0 || e < -13) return static_cast<uint16_t>(sign);
  const int mant = static_cast<int>(std::lround((m * 2 - 1) * 1024));
  return static_cast<uint16_t>(sign | ((e - 1 + 15) << 10) | std::min(mant, 1023));
}

// `clean`: every value finite on both sides (the comparison's fast path).
Pair RandomPair(DType dtype, int64_t n, std::mt19937_64& rng, bool clean) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal(0, 1);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto special = [&](double x) {
    const double r = clean ? 1.0 : unit(rng);
    if (r < 0.02) return nan;
    if (r < 0.03) return inf;
    if (r < 0.04) return -inf;
    if (r < 0.06) return 0.0;
    if (r < 0.07) return x * 1e30;
    return x;
  };
  auto perturb = [&](double e) {
    const double r = unit(rng);
    if (r < 0.5) return e;
    if (r < 0.7) return e + (std::fabs(e) + 1) * 1e-5 * normal(rng);
    if (r < 0.8) return e + normal(rng) * 1e-2;
    if (r < 0.85) return clean ? e : nan;
    if (r < 0.88) return clean ? -e : inf;
    return e * (1 + 1e-3 * normal(rng));
  };
  std::vector<double> e(n), a(n);
  for (int64_t i = 0; i < n; ++i) {
    e[i] = special(normal(rng));
    a[i] = perturb(e[i]);
  }
  Pair p;
  switch (dtype) {
    case DType::kFloat32: {
      std::vector<float> fe(e.begin(), e.end()), fa(a.begin(), a.end());
      p = {Bytes(fe), Bytes(fa)};
      break;
    }
    case DType::kFloat64:
      p = {Bytes(e), Bytes(a)};
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      std::vector<uint16_t> he(n), ha(n);
      for (int64_t i = 0; i < n; ++i) {
        he[i] = ToHalfBits(static_cast<float>(e[i]), dtype == DType::kBFloat16);
        ha[i] = ToHalfBits(static_cast<float>(a[i]), dtype == DType::kBFloat16);
      }
      p = {Bytes(he), Bytes(ha)};
      break;
    }
    default: {
      // Integers: small values, some off by a little, and the type's extremes.
      const std::size_t size = DTypeSize(dtype);
      std::string be(n * size, '\0'), ba(n * size, '\0');
      std::uniform_int_distribution<int64_t> small(-100, 100);
      for (int64_t i = 0; i < n; ++i) {
        int64_t x = small(rng), y = x;
        const double r = unit(rng);
        if (r < 0.1) y = x + small(rng) % 3;
        if (r > 0.97) x = std::numeric_limits<int64_t>::max();
        if (r > 0.985) y = std::numeric_limits<int64_t>::min();
        if (dtype == DType::kBool) {
          x = x & 1;
          y = r < 0.05 ? 2 : y & 1;  // A bool byte of 2 reads as true.
        }
        if (dtype == DType::kUInt8) {
          x &= 0xff;
          y &= 0xff;
        }
        std::memcpy(&be[i * size], &x, size);  // Little-endian: the low bytes.
        std::memcpy(&ba[i * size], &y, size);
      }
      p = {be, ba};
    }
  }
  return p;
}

TEST_F(CompareTorchTest, AgreesWithCompareTensorsFieldForField) {
  std::mt19937_64 rng(20261206);
  const std::vector<DType> dtypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64,
                                     DType::kInt32,   DType::kInt16,   DType::kInt8,    DType::kUInt8,    DType::kBool};
  const std::vector<double> tolerances = {0, 1e-4, 1e-2, 0.5};
  struct Case {
    TensorView expected, actual;
    Tolerance tol;
    std::string e_bytes, a_bytes;
  };
  std::vector<Case> cases;
  nlohmann::json listed = nlohmann::json::array();
  for (int c = 0; c < 300; ++c) {
    const DType dtype = dtypes[c % dtypes.size()];
    const int64_t rows = c % 7, cols = 1 + (c * 37) % 613;
    std::vector<int64_t> shape = {rows, cols};
    Pair p = RandomPair(dtype, rows * cols, rng, c % 3 == 0);
    Tolerance tol{tolerances[c % 4], tolerances[(c / 4) % 4], (c / 16) % 2 == 0};
    std::vector<int64_t> actual_shape = shape;
    DType actual_dtype = dtype;
    if (c % 50 == 49) actual_shape = {rows * cols};  // Shape differs.
    if (c % 50 == 48 && dtype != DType::kInt64) {    // Dtype differs (same bytes per element or not).
      actual_dtype = dtype == DType::kFloat16 ? DType::kBFloat16 : DType::kInt64;
      p.actual.resize(static_cast<std::size_t>(rows * cols) * DTypeSize(actual_dtype));
    }
    const auto dir = dir_ / std::to_string(c);
    TensorEntry e{"out0", dtype, shape, "e.bin"}, a{"out0", actual_dtype, actual_shape, "a.bin"};
    ASSERT_TRUE(WriteTensorDir(dir / "expected", {{e, p.expected}}).ok());
    ASSERT_TRUE(WriteTensorDir(dir / "actual", {{a, p.actual}}).ok());
    listed.push_back({{"expected", (dir / "expected").string()},
                      {"actual", (dir / "actual").string()},
                      {"atol", tol.atol},
                      {"rtol", tol.rtol},
                      {"nan_equal", tol.nan_equal}});
    cases.push_back({{dtype, shape, nullptr}, {actual_dtype, actual_shape, nullptr}, tol, p.expected, p.actual});
  }
  ASSERT_TRUE(WriteFileAtomic(dir_ / "cases.json", listed.dump()).ok());
  ProcessSpec spec = PythonWorkerSpec("compare_torch", {(dir_ / "cases.json").string()});
  spec.env.emplace_back("ANVIL_COMPARE_CHUNK", "1000");
  spec.deadline = std::chrono::seconds(300);
  spec.output_cap = std::size_t{64} << 20;
  auto run = RunProcess(spec);
  ASSERT_TRUE(run.ok()) << run.message();
  ASSERT_TRUE(run.value().Succeeded()) << run.value().err;
  std::istringstream lines(run.value().out);
  auto number = [](const nlohmann::json& j) {
    return j.is_string() ? std::stod(j.get<std::string>() == "nan" ? "nan" : j.get<std::string>()) : j.get<double>();
  };
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  int mismatching_cases = 0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "no result for case " << c;
    const nlohmann::json t = nlohmann::json::parse(line);
    Case& k = cases[c];
    k.expected.data = k.e_bytes.data();
    k.actual.data = k.a_bytes.data();
    const CompareResult r = CompareTensors(k.expected, k.actual, k.tol);
    SCOPED_TRACE("case " + std::to_string(c) + " " + std::string(DTypeName(k.expected.dtype)) + ": " + line);
    EXPECT_EQ(t["ok"].get<bool>(), r.ok);
    EXPECT_EQ(t["problem"].get<std::string>(), r.problem);
    EXPECT_EQ(t["elements"].get<int64_t>(), r.elements);
    EXPECT_EQ(t["mismatches"].get<int64_t>(), r.mismatches);
    EXPECT_EQ(t["nonfinite_mismatches"].get<int64_t>(), r.nonfinite_mismatches);
    EXPECT_EQ(t["first_mismatch"].get<int64_t>(), r.first_mismatch);
    EXPECT_EQ(t["first_mismatch_index"].get<std::vector<int64_t>>(), r.first_mismatch_index);
    EXPECT_PRED2(same, number(t["expected_at_first"]), r.expected_at_first);
    EXPECT_PRED2(same, number(t["actual_at_first"]), r.actual_at_first);
    EXPECT_PRED2(same, number(t["max_abs_error"]), r.max_abs_error);
    EXPECT_PRED2(same, number(t["max_rel_error"]), r.max_rel_error);
    const double mean = number(t["mean_abs_error"]);
    EXPECT_TRUE(same(mean, r.mean_abs_error) ||
                std::fabs(mean - r.mean_abs_error) <= 1e-12 * std::fabs(r.mean_abs_error))
        << mean << " vs " << r.mean_abs_error;
    if (r.mismatches > 0) ++mismatching_cases;
  }
  // The cases are not all trivially right: most have mismatches of some kind.
  EXPECT_GT(mismatching_cases, 150);
}

}  // namespace
}  // namespace anvil
