#!/usr/bin/env bash
# Cross-compile the D3D11 runner (runner.c) into a 64-bit Windows console program with Debian's
# mingw-w64. The .exe runs under Wine here and unchanged on Windows.
#
#   bash runners/d3d11/build.sh [OUT.exe]
#
# Default output: $SM5_D3D11_DIR/sm5-d3d11-runner.exe (SM5_D3D11_DIR defaults to
# ~/.cache/sm5-conformance/d3d11). The build is skipped when the output was built from the same
# runner.c and build.sh (their sha256 is kept next to it in OUT.exe.sha256).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${SM5_D3D11_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/d3d11}"
out="${1:-$dir/sm5-d3d11-runner.exe}"
cc="${MINGW_CC:-x86_64-w64-mingw32-gcc}"
if ! command -v "$cc" >/dev/null; then
  echo "build.sh: $cc not found (Debian: apt-get install gcc-mingw-w64-x86-64)" >&2
  exit 1
fi
source_sum="$(cat "$here/runner.c" "$here/build.sh" | sha256sum | cut -d' ' -f1)"
if [[ -f "$out" && -f "$out.sha256" && "$(cat "$out.sha256")" == "$source_sum" ]]; then
  echo "build.sh: $out is up to date"
  exit 0
fi
mkdir -p "$(dirname "$out")"
tmp="$(mktemp "$(dirname "$out")/.runner.XXXXXX.exe")"
trap 'rm -f "$tmp"' EXIT
"$cc" -std=c99 -O2 -Wall -Wextra -Werror -o "$tmp" "$here/runner.c" \
  -static -ld3d11 -ldxgi -luuid
chmod 755 "$tmp"
mv -f "$tmp" "$out"
trap - EXIT
printf '%s\n' "$source_sum" > "$out.sha256.tmp" && mv -f "$out.sha256.tmp" "$out.sha256"
echo "build.sh: built $out"
