#!/usr/bin/env bash
# Install the D3D11 test target of sm5-conformance: Wine's d3d11 on Mesa (llvmpipe for its
# OpenGL renderer, lavapipe for its Vulkan renderer), Xvfb, and mingw-w64 to cross-compile the
# runner (runners/d3d11/runner.c) into sm5-d3d11-runner.exe; then build the runner and create
# the cached Wine prefix.
#
#   setup.sh
#
# Environment:
#   SM5_D3D11_DIR  output dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/d3d11):
#                  the runner .exe and the Wine prefix (about 700 MB)
#   PYTHON         the project's interpreter (default: python3 on PATH)
# Idempotent: installed packages, an up-to-date runner and a ready prefix are kept.
set -euo pipefail
cd "$(dirname "$0")/../.."

PKGS="wine wine64 xvfb mesa-vulkan-drivers libgl1-mesa-dri gcc-mingw-w64-x86-64"
PYTHON="${PYTHON:-python3}"

log() { printf '[d3d11-setup] %s\n' "$*"; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=""
for pkg in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $pkg"
    fi
done
if [ -n "$missing" ]; then
    log "apt-get update"
    as_root apt-get update -qq
    log "apt-get install$missing"
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    as_root env DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes \
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
    log "apt packages already installed: $PKGS"
fi

log "building the runner"
bash runners/d3d11/build.sh
log "creating the Wine prefix (once; about 20 s)"
"$PYTHON" -c 'from sm5.conformance.d3d11.host import ensure_prefix, wine_program
print("[d3d11-setup] prefix:", ensure_prefix(wine_program()))'
