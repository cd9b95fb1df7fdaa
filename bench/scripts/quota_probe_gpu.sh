#!/bin/bash
# One device call for the device-memory quota (issue 38): NVML's view of our processes
# (nvml_probe_gpu.sh), the quota's GPU test, then the perf.recheck bisect (recheck_bisect_gpu.sh).
#   run(command="bash bench/scripts/quota_probe_gpu.sh", carry=[".carry", ".kb", ".whl"])
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
timeout 60 bash bench/scripts/nvml_probe_gpu.sh 2>&1 | tee "$OUT/nvml_probe.log" | tail -25
OUT=$OUT TESTS=tests/gpu/test_gpu_device_memory.py timeout 300 bash bench/scripts/gpu_suite.sh 2>&1 | tail -25
timeout 200 bash bench/scripts/recheck_bisect_gpu.sh 2>&1 | tee "$OUT/recheck_bisect.log" | tail -30
