#!/bin/bash
# Makes .carry/ (gitignored), what the device scripts run when carried to a GPU machine:
#   .carry/anvil and .carry/libanvil_*.so  this checkout's build (BUILD, default build/), stripped;
#   .carry/lib/                            the shared libraries they need beyond glibc and the C++ runtime (libcurl,
#                                          SQLite and theirs): a script adds it to LD_LIBRARY_PATH only where `ldd`
#                                          there finds one missing;
#   .carry/src/                            python/ include/ examples/ tests/ as committed at HEAD, for scripts that
#                                          run a build against its own sources.
# Rerun after every build that is to be measured; idempotent. Size: ~20 MiB of the 64 MiB a call may carry.
set -eu
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
[ -x "$B/anvil" ] || { echo "make_carry: no $B/anvil; build first (scripts/setup.sh or cmake --build $B)" >&2; exit 1; }
rm -rf .carry && mkdir -p .carry/lib .carry/src
cp "$B"/anvil "$B"/libanvil_*.so .carry/
strip .carry/anvil .carry/*.so
# Everything ldd resolves outside this tree but the loader, glibc's own libraries and the C++ runtime.
ldd .carry/anvil .carry/*.so | awk '/=> \//{print $3}' | sort -u |
  grep -v -E '/(ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s)\.so' |
  grep -v "$PWD" | while read -r lib; do cp -L "$lib" .carry/lib/; done
git archive HEAD python include examples tests | tar -x -C .carry/src
echo "make_carry: $(git rev-parse --short HEAD) $(du -sh .carry | cut -f1) in .carry ($(ls .carry/lib | wc -l) libraries)"
