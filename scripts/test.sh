#!/usr/bin/env bash
# Sets everything up, then runs every CPU test (unit, CLI black-box, Python).
# GPU tests carry the CTest label `gpu`; run them on a GPU machine with
#   ctest --test-dir build -L gpu
# The real model server's test (llama-cpp-python, built from source: ~5 minutes) carries `model_server`:
#   scripts/model_server_venv.sh && ctest --test-dir build -L model_server
# verl 0.9.1 from PyPI runs anvil's reward manager, agent loop, estimator and policy loss (and slime's rollout), in
# .venv-verl (~1 GB, ~1 minute to install;
# label `verl`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/verl_venv.sh"
build="${ANVIL_BUILD_DIR:-$root/build}"
labels=(-LE "gpu|model_server")
[ "${ANVIL_GPU_TESTS:-0}" = "1" ] && labels=()
# One test per core, at most 4 (the CLI tests build candidates: each wants a core and a few GiB). Serially, CI's 2 cores
# took 57 minutes of tests; ANVIL_TEST_JOBS=1 for that.
jobs="$(nproc)"
[ "$jobs" -gt 4 ] && jobs=4
jobs="${ANVIL_TEST_JOBS:-$jobs}"
ctest --test-dir "$build" --output-on-failure -j "$jobs" "${labels[@]}" "$@"
