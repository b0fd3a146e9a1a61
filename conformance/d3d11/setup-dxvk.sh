#!/usr/bin/env bash
# Install DXVK (d3d11.dll and dxgi.dll, mingw PE DLLs) for the implementation `d3d11:dxvk`: the
# D3D11 runner under Wine with DXVK's DLLs in place of Wine's, on Mesa lavapipe. Needs the D3D11
# target first (conformance/d3d11/setup.sh: Wine, Xvfb, Mesa, the runner).
#
#   setup-dxvk.sh
#
# Source: Debian's binary package dxvk-wine64 of suite $SM5_DXVK_SUITE (default trixie:
# DXVK 2.6), downloaded with apt through a private state folder (conformance/apt-private.sh: the
# machine's own Debian mirror; its apt sources are never modified) and unpacked with dpkg-deb.
# Debian names the PE DLLs *.dll.so (usr/lib/dxvk/wine64); they are copied back to d3d11.dll
# and dxgi.dll. Nothing is installed system-wide, so the same steps work on Debian 12 and 13.
#
# Fallback when no binary package exists: build the same DLLs from Debian's `dxvk` source
# package of that suite (apt-get source through the same private state; meson with DXVK's
# build-win64.txt cross file, mingw-w64, glslang-tools; the Vulkan and SPIR-V headers the
# source wants, from the same suite, unpacked privately), then put d3d11.dll, dxgi.dll and a
# VERSION line in $SM5_DXVK_DIR by hand. About 10 minutes on two cores; see the README.
#
# Environment:
#   SM5_DXVK_DIR    output dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/dxvk):
#                   d3d11.dll, dxgi.dll and VERSION (about 8 MB)
#   SM5_DXVK_SUITE  the Debian suite to take dxvk-wine64 from (default trixie)
# Idempotent: an installed DXVK (both DLLs and VERSION present) is kept; delete the folder to
# fetch again.
set -euo pipefail

PKG=dxvk-wine64
SUITE="${SM5_DXVK_SUITE:-trixie}"
SM5_DXVK_DIR="${SM5_DXVK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/dxvk}"
DLL_DIR=usr/lib/dxvk/wine64

log() { printf '[dxvk-setup] %s\n' "$*"; }
die() { printf '[dxvk-setup] error: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
    "") ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option: $1 (setup-dxvk.sh takes none)" ;;
esac

# shellcheck source=conformance/apt-private.sh
. "$(dirname "$0")/../apt-private.sh"

if [ -f "$SM5_DXVK_DIR/d3d11.dll" ] && [ -f "$SM5_DXVK_DIR/dxgi.dll" ] \
        && [ -s "$SM5_DXVK_DIR/VERSION" ]; then
    log "already installed: DXVK $(cat "$SM5_DXVK_DIR/VERSION") in $SM5_DXVK_DIR"
    exit 0
fi

start=$SECONDS
mkdir -p "$(dirname "$SM5_DXVK_DIR")"
work="$(mktemp -d "$(dirname "$SM5_DXVK_DIR")/.dxvk-setup.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "apt-get download $PKG (suite $SUITE, private apt state)"
private_apt "$work" deb "$SUITE"
mkdir -p "$work/dl" "$work/unpacked" "$work/out"
(cd "$work/dl" && apt-get "${APT_OPTS[@]}" -qq download "$PKG") \
    || die "apt-get download $PKG from $SUITE failed (see the fallback in $0 --help)"
deb="$(find "$work/dl" -name "${PKG}_*.deb" -print -quit)"
[ -n "$deb" ] || die "apt-get download left no $PKG package"
version="$(dpkg-deb -f "$deb" Version)"
dpkg-deb -x "$deb" "$work/unpacked"
for dll in d3d11 dxgi; do
    src="$work/unpacked/$DLL_DIR/$dll.dll.so"
    [ -f "$src" ] || die "$PKG $version has no $DLL_DIR/$dll.dll.so"
    [ "$(head -c 2 "$src")" = "MZ" ] || die "$DLL_DIR/$dll.dll.so of $PKG $version is not a PE DLL"
    cp "$src" "$work/out/$dll.dll"
done
printf '%s (Debian %s %s)\n' "$version" "$SUITE" "$PKG" >"$work/out/VERSION"
# Replace the folder in one step (a half-made one is never seen by the adapter).
rm -rf "$SM5_DXVK_DIR.old"
[ -e "$SM5_DXVK_DIR" ] && mv "$SM5_DXVK_DIR" "$SM5_DXVK_DIR.old"
mv "$work/out" "$SM5_DXVK_DIR"
rm -rf "$SM5_DXVK_DIR.old"
log "installed DXVK $(cat "$SM5_DXVK_DIR/VERSION") in $SM5_DXVK_DIR ($((SECONDS - start)) s)"
