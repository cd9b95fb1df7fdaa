#!/usr/bin/env bash
# Sets up everything anvil needs on a Debian/Ubuntu machine, idempotently:
# apt packages, the project venv (torch==2.11.0), and the build.
# Usage: scripts/setup.sh            (run from anywhere; needs root or sudo for apt)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

packages=(build-essential cmake ninja-build g++ python3 python3-venv python3-dev
          nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev clang-format
          libcurl4-openssl-dev libsqlite3-dev zlib1g-dev chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  log "installing apt packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

venv="${ANVIL_VENV:-$root/.venv}"
if [ ! -x "$venv/bin/python" ]; then
  log "creating the project venv at $venv"
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import torch, numpy, pytest, jsonschema; assert torch.__version__.startswith('2.11.0')" 2>/dev/null; then
  log "installing torch==2.11.0, numpy, pytest, jsonschema into the venv (a few minutes the first time)"
  "$venv/bin/pip" install -q --disable-pip-version-check torch==2.11.0 numpy pytest jsonschema
fi

build="${ANVIL_BUILD_DIR:-$root/build}"
log "building anvil in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DANVIL_PYTHON="$venv/bin/python" >/dev/null
cmake --build "$build" -j "$(nproc)"
log "ready: $build/anvil"
