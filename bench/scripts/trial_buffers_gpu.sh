#!/bin/bash
# Runs `--trial-data files`, retired after commit 0621339: to reproduce, run it from a checkout of that commit.
# Issue 38 step 4 on the device: the trial data in device memory of its own (python/anvil_py/device_buffers.py) —
# tests/gpu/test_gpu_trial_buffers.py, then the eight real-size candidates of trial_server_gpu.sh judged with
# `--trial-data files` (the trials through files, the timed sets preloaded) and `server` (device buffers, each timed
# call's set written after its `ready`). Carried (gitignored): .carry/ (this build, stripped, its libanvil_*.so,
# .carry/lib), .kb/ (the KernelBench problems, see quota_gpu.sh) and .whl/ (pytest's wheels, for an image without it:
# pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl pytest pluggy iniconfig packaging pygments).
#   run(command="bash bench/scripts/trial_buffers_gpu.sh", carry=[".carry", ".kb", ".whl"])
# SKIP_TESTS=1 runs the comparison alone; MODES and LIMIT go to trial_server_gpu.sh (default "files server
# preloaded": "server" writes each timed call's set after `ready`, the default; "preloaded" is the server with
# ANVIL_CUDA_SETS_WRITTEN=0; each pass 13-44 s on an H100, LIMIT 170 s).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
mkdir -p "$OUT"
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
if [ -z "${SKIP_TESTS:-}" ]; then
  export ANVIL_BIN=$PWD/.carry/anvil ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python:$PWD ANVIL_GPU_OUT=$OUT PYTHONUNBUFFERED=1
  if ! python3 -c "import pytest" 2>/dev/null; then  # Not in the image: wheels carried in .whl/.
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=$PYTHONPATH:/tmp/site
  fi
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_trial_buffers.py 2>&1 | tee "$OUT/pytest.log"
fi
MODES=${MODES:-files server preloaded} LIMIT=${LIMIT:-170} bash bench/scripts/trial_server_gpu.sh
