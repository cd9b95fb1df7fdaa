#!/usr/bin/env bash
# Sets everything up, then runs anvil's main job on its embedded default:
# `anvil eval` over the bundled examples with the local (cpu) backend.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
exec "${ANVIL_BUILD_DIR:-$root/build}/anvil" eval "$@"
