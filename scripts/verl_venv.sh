#!/usr/bin/env bash
# verl 0.9.1 from PyPI, for the tests labelled `verl` (python/tests/test_verl_*.py): they build verl's own
# reward-loop and agent-loop objects around anvil's manager, agent loop, estimator and policy loss. In its own venv, .venv-verl (~1 GB: ray, transformers, datasets, ...),
# so that the project venv keeps only what anvil needs; PyTorch is the project venv's (a .pth file points there), so
# the CUDA wheel is not downloaded twice. Needs scripts/setup.sh first. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ANVIL_VERL_VENV:-$root/.venv-verl}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import verl, PIL, torch, cachetools, uvicorn, fastapi" 2>/dev/null; then
  exit 0
fi
base_site="$("$root/.venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$root/.venv/bin/python" -m venv "$venv"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# After the venv's own packages: verl's pins win, torch and its CUDA libraries come from the project venv.
echo "$base_site" > "$site/zz-anvil-project-venv.pth"
# Pillow, cachetools, uvicorn, fastapi: verl's agent loop imports them without declaring them.
"$venv/bin/python" -m pip install -q "verl==0.9.1" "Pillow" "cachetools" "uvicorn" "fastapi"
"$venv/bin/python" -c "import verl, PIL, torch, cachetools, uvicorn, fastapi"
