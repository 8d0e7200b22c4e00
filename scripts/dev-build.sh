#!/usr/bin/env bash
# Developer build in the shared tree build/dev (Debug, -Werror), serialised with flock so
# several people (or agents) working in one checkout never run two builds at once.
#   scripts/dev-build.sh [TARGET...]     default: all
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
exec 9>build/.dev.lock
flock 9
if [[ ! -f build/dev/build.ninja ]]; then
  cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Debug -DINFERENG_WERROR=ON >/dev/null
fi
if [[ $# -eq 0 ]]; then
  cmake --build build/dev -j2
else
  cmake --build build/dev -j2 --target "$@"
fi
