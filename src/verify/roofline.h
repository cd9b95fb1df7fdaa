// A physical floor under a timed call (catalog D8). Whatever a kernel does, it
// has to write its outputs to device memory, so a call faster than output
// bytes / (kRooflineSlack × the device's peak memory bandwidth) is impossible:
// the time was forged or the work was not done inside it. The slack covers
// outputs that end in the L2 cache (faster than memory). Peak bandwidths are
// the vendors' figures for the models anvil knows; unknown models (and CPUs)
// have no floor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil {

inline constexpr double kRooflineSlack = 4.0;

// GB/s (1e9 bytes) for a device model as nvidia-smi names it ("NVIDIA H200");
// 0 when unknown.
double PeakMemoryBandwidthGBs(std::string_view device_model);

// Bytes of the outputs a spec.json (docs/spec.md) lists; 0 when it cannot tell.
int64_t SpecOutputBytes(const std::string& spec_json);

// The floor in ms for writing `bytes` at `peak_gbs` with kRooflineSlack; 0
// when either is unknown.
double RooflineFloorMs(int64_t bytes, double peak_gbs);

}  // namespace anvil
