#!/usr/bin/env bash
# The real OpenAI-compatible model server that tests/cli/test_real_model_server.py runs anvil against:
# llama-cpp-python's server (built from source by pip: ~5 minutes on two cores) and the gguf package the test
# writes its tiny random model with (no weights are downloaded). In its own venv, .venv-model-server, so that the
# project venv keeps only what anvil needs. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ANVIL_MODEL_SERVER_VENV:-$root/.venv-model-server}"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import llama_cpp.server, gguf" 2>/dev/null; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q "llama-cpp-python[server]==0.3.36" "gguf==0.19.0"
