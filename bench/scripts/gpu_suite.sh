#!/bin/bash
# The GPU suite (the tests labelled gpu: tests/gpu/test_*.py) in parts, each one device call of under 10 minutes,
# and resumable: PART=0 runs the red-team, device-buffer and device-memory-quota tests (TESTS="FILE ...": those alone); PART=1..PARTS-1 each take every (PARTS-1)-th
# problem of test_gpu_candidates.py (33 problems, 63 candidates; on an H100 the first 16 problems took 12
# device-minutes in 5 parts, bench/results/trial_buffers_step4_h100.md; the 17 multi-GB problems added since are
# heavier: measure a part before planning the rest). Verdicts go to
# $OUT/gpu_verdicts.jsonl; a call that carries .gpu-done/ (the files an earlier call brought back, copied there)
# skips the candidates judged already. Carried (gitignored): .carry/ (this build, stripped, its libanvil_*.so,
# .carry/lib), .kb/ (the KernelBench problems the part needs), .whl/ (pytest's wheels, see trial_buffers_gpu.sh).
#   run(command="PART=1 bash bench/scripts/gpu_suite.sh", carry=[".carry", ".kb", ".whl", ".gpu-done"])
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/bench-out}
PART=${PART:-0}
PARTS=${PARTS:-9}
mkdir -p "$OUT"
if ldd .carry/anvil | grep -q "not found"; then export LD_LIBRARY_PATH=$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
export ANVIL_BIN=$PWD/.carry/anvil ANVIL_SOURCE_DIR=$PWD PYTHONPATH=$PWD/python ANVIL_GPU_OUT=$OUT \
  ANVIL_KERNELBENCH=$PWD/.kb PYTHONUNBUFFERED=1
if ! python3 -c "import pytest" 2>/dev/null; then  # Not in the image: wheels carried in .whl/.
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
# Once per $OUT: a later part in the same call keeps what the earlier ones judged.
[ -f .gpu-done/gpu_verdicts.jsonl ] && [ ! -f "$OUT/gpu_verdicts.jsonl" ] && cp .gpu-done/gpu_verdicts.jsonl "$OUT/"
if [ -n "${TESTS:-}" ]; then  # Named files alone, e.g. TESTS=tests/gpu/test_gpu_device_memory.py.
  tests=$TESTS
elif [ "$PART" = 0 ]; then
  tests="tests/gpu/test_gpu_redteam.py tests/gpu/test_gpu_trial_buffers.py tests/gpu/test_gpu_device_memory.py"
else
  tests=$(python3 -c "
import sys; sys.path.insert(0, 'tests/gpu')
from test_gpu_candidates import problems
print(' '.join(f'tests/gpu/test_gpu_candidates.py::test_gpu_candidates_get_expected_status[{p}]'
               for i, p in enumerate(problems()) if i % ($PARTS - 1) == $PART - 1))")
  echo "part $PART of $PARTS: $tests"
fi
timeout 570 python3 -m pytest -q -p no:cacheprovider $tests 2>&1 | tee "$OUT/pytest_part$PART.log"
