#include "verify/roofline.h"

#include <nlohmann/json.hpp>

#include "verify/compare.h"

namespace anvil {

namespace {

struct Peak {
  const char* name_part;  // First match wins: more specific names first.
  double gbs;
};

// Vendor datasheet peaks (HBM/GDDR), by the names nvidia-smi prints.
constexpr Peak kPeaks[] = {
    {"GB200", 8000},
    {"B200", 8000},
    {"GH200", 4000},  // Before "H200", which its name contains.
    {"H200", 4800},
    {"H100 NVL", 3900},
    {"H100 PCIe", 2000},
    {"H100", 3350},
    {"A100 80GB PCIe", 1935},
    {"A100-SXM4-80GB", 2039},
    {"A100", 1555},
    {"L40S", 864},
    {"L40", 864},
    {"L4", 300},
    {"A10", 600},
    {"RTX 4090", 1008},
    {"V100", 900},
    {"T4", 320},
};

}  // namespace

double PeakMemoryBandwidthGBs(std::string_view device_model) {
  for (const Peak& p : kPeaks) {
    if (device_model.find(p.name_part) != std::string_view::npos) return p.gbs;
  }
  return 0;
}

int64_t SpecOutputBytes(const std::string& spec_json) {
  const nlohmann::json spec = nlohmann::json::parse(spec_json, nullptr, false);
  if (!spec.is_object() || !spec.contains("outputs") || !spec["outputs"].is_array()) return 0;
  int64_t total = 0;
  for (const auto& o : spec["outputs"]) {
    if (!o.is_object() || !o.contains("shape") || !o["shape"].is_array()) return 0;
    auto dtype = ParseDType(o.value("dtype", ""));
    if (!dtype.ok()) return 0;
    std::vector<int64_t> shape;
    for (const auto& d : o["shape"]) {
      if (!d.is_number_integer()) return 0;
      shape.push_back(d.get<int64_t>());
    }
    const int64_t n = NumElements(shape);
    if (n < 0) return 0;
    total += n * static_cast<int64_t>(DTypeSize(dtype.value()));
  }
  return total;
}

double RooflineFloorMs(int64_t bytes, double peak_gbs) {
  if (bytes <= 0 || peak_gbs <= 0) return 0;
  return static_cast<double>(bytes) / (kRooflineSlack * peak_gbs * 1e9) * 1e3;
}

}  // namespace anvil
