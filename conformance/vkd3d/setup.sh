#!/usr/bin/env bash
# Install the vkd3d-shader + lavapipe test target of sm5-conformance.
#
#   setup.sh              apt packages, build libvkd3d-shader 1.14, pip install vulkan
#   setup.sh --no-build   runtime apt packages (incl. Debian's vkd3d-compiler 1.2) + vulkan only
#
# Why a build: Debian ships vkd3d 1.2, which lacks dmovc, HLSL and the disassembler.
# Debian trixie's `wine` 10.0 source package bundles vkd3d 1.14 (libs/vkd3d), so the
# library can be built from the Debian archive alone. The source is fetched with apt
# through a private state dir, so the machine's own apt sources are never modified.
#
# Environment:
#   SM5_VKD3D_DIR  output dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/vkd3d)
#   PYTHON         interpreter that receives `vulkan` (default: python3 on PATH)
# Idempotent: packages already installed and an existing libvkd3d-shader.so are kept.
set -euo pipefail

WINE_SUITE=trixie
WINE_SRC_PKG=wine
IDL_FILES=(d3dcommon d3d12shader d3d12 dxgicommon dxgiformat dxgitype dxgi unknwn wtypes
    objidl oaidl ocidl propidl oleidl servprov urlmon msxml objidlbase)
RUNTIME_PKGS="mesa-vulkan-drivers libvulkan1 vkd3d-compiler"
BUILD_PKGS="gcc libc6-dev bison flex mingw-w64-tools xz-utils"

log() { printf '[vkd3d-setup] %s\n' "$*"; }
die() { printf '[vkd3d-setup] error: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
}

BUILD=1
for arg in "$@"; do
    case "$arg" in
        --no-build) BUILD=0 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown option: $arg" ;;
    esac
done

SM5_VKD3D_DIR="${SM5_VKD3D_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/sm5-conformance/vkd3d}"
PYTHON="${PYTHON:-python3}"
LIB="$SM5_VKD3D_DIR/libvkd3d-shader.so"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- apt packages -----------------------------------------------------------

missing_packages() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
            printf '%s ' "$pkg"
        fi
    done
}

install_packages() {
    local missing
    missing="$(missing_packages "$@")"
    if [ -z "$missing" ]; then
        log "apt packages already installed: $*"
        return
    fi
    log "apt-get update"
    as_root apt-get update -qq
    missing="${missing% }"
    log "apt-get install $missing"
    # shellcheck disable=SC2086  # word splitting of the package list is intended
    as_root env DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes \
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# --- private apt state (machine_mirror, private_apt) -----------------------------

# shellcheck source=conformance/apt-private.sh
. "$(dirname "$0")/../apt-private.sh"

# --- fetch wine source (bundles vkd3d 1.14) -----------------------------------

fetch_wine_source() {
    local work="$1"
    mkdir -p "$work/dl"
    if ! ls "$work"/dl/"${WINE_SRC_PKG}"_*.orig.tar.* >/dev/null 2>&1; then
        log "apt-get source --download-only $WINE_SRC_PKG (suite $WINE_SUITE, private apt state)"
        private_apt "$work" deb-src "$WINE_SUITE"
        (cd "$work/dl" && apt-get "${APT_OPTS[@]}" -qq source --download-only "$WINE_SRC_PKG")
        rm -rf "$work/apt"  # only needed for this download; the source stays for rebuilds
    else
        log "wine source already downloaded"
    fi
}

# Sets WINE_TOP to the extracted source root.
extract_wine_source() {
    local work="$1" tarball
    local -a tarballs=("$work"/dl/"${WINE_SRC_PKG}"_*.orig.tar.*)
    tarball="${tarballs[0]}"
    rm -rf "$work/src"
    mkdir -p "$work/src"
    log "extracting libs/vkd3d and include from $(basename "$tarball")"
    tar -xf "$tarball" -C "$work/src" --wildcards '*/libs/vkd3d' '*/include' \
        --no-wildcards-match-slash
    WINE_TOP="$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -print -quit)"
    [ -f "$WINE_TOP/libs/vkd3d/include/vkd3d_shader.h" ] || die "vkd3d not found in $tarball"
}

# --- build libvkd3d-shader ------------------------------------------------------

build_library() {
    local work="$SM5_VKD3D_DIR/build" top v gen obj buildlog
    mkdir -p "$work"
    fetch_wine_source "$work"
    extract_wine_source "$work"
    top="$WINE_TOP"
    v="$top/libs/vkd3d"
    gen="$work/gen"; obj="$work/obj"; buildlog="$work/build.log"
    rm -rf "$gen" "$obj"; mkdir -p "$gen" "$obj"; : >"$buildlog"
    log "vkd3d version: $(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$v/config.h")"

    log "widl: generating ${#IDL_FILES[@]} COM headers"
    printf '%s\n' "${IDL_FILES[@]}" | xargs -P 2 -I{} \
        x86_64-w64-mingw32-widl -I "$top/include" -h -o "$gen/{}.h" "$top/include/{}.idl" \
        >>"$buildlog" 2>&1 || { tail -n 30 "$buildlog" >&2; die "widl failed"; }

    log "bison/flex: hlsl and preproc grammars"
    local s="$v/libs/vkd3d-shader" g
    for g in hlsl preproc; do
        bison -o "$gen/$g.tab.c" --defines="$gen/$g.tab.h" "$s/$g.y" >>"$buildlog" 2>&1 \
            || { tail -n 30 "$buildlog" >&2; die "bison $g.y failed"; }
        flex -o "$gen/$g.yy.c" "$s/$g.l" >>"$buildlog" 2>&1 \
            || { tail -n 30 "$buildlog" >&2; die "flex $g.l failed"; }
    done
    printf 'const char *const vkd3d_dbg_env_name = "VKD3D_SHADER_DEBUG";\n' >"$gen/dbg_env_name.c"

    local -a cflags=(
        -O2 -fPIC -fvisibility=hidden -w
        -DLIBVKD3D_SHADER_SOURCE -DWINE_NO_NAMELESS_EXTENSION -DHAVE_ATOMIC_EXCHANGE_N
        -DHAVE_BUILTIN_ADD_OVERFLOW -DHAVE_BUILTIN_CLZ -DHAVE_SYNC_ADD_AND_FETCH
        -DHAVE_SYNC_BOOL_COMPARE_AND_SWAP -DHAVE_PTHREAD_H -DHAVE_DLFCN_H -DHAVE_GETTID
        -DHAVE_DECL_PROGRAM_INVOCATION_NAME=1 -D_GNU_SOURCE
        -I"$gen" -I"$s" -I"$top/include" -I"$v/include/private" -I"$v/include" -I"$v"
    )
    local -a sources=(
        "$v"/libs/vkd3d-common/{debug,error,memory,utf8}.c
        "$s"/*.c
        "$gen"/{hlsl,preproc}.{tab,yy}.c
        "$gen/dbg_env_name.c"
    )
    log "gcc: compiling ${#sources[@]} files (2 jobs)"
    # Object name = parent dir + file name, so equal basenames cannot collide.
    # shellcheck disable=SC2016  # expanded by the inner sh, once per source file
    printf '%s\n' "${sources[@]}" | xargs -P 2 -I{} sh -c '
        obj="$1" src="$2"; shift 2
        exec gcc "$@" -c "$src" -o "$obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o"
        ' sh "$obj" {} "${cflags[@]}" \
        >>"$buildlog" 2>&1 || { tail -n 30 "$buildlog" >&2; die "compilation failed (log: $buildlog)"; }

    log "linking $LIB"
    gcc -shared -o "$LIB.tmp" "$obj"/*.o -lm -lpthread -ldl >>"$buildlog" 2>&1 \
        || { tail -n 30 "$buildlog" >&2; die "link failed"; }
    mv -f "$LIB.tmp" "$LIB"
    # Public headers stay next to the library so tests can check the ctypes layouts.
    mkdir -p "$SM5_VKD3D_DIR/include"
    cp "$v/include/vkd3d_shader.h" "$v/include/vkd3d_types.h" "$SM5_VKD3D_DIR/include/"
    rm -rf "$work/src" "$obj" "$gen"
}

check_library() {
    "$PYTHON" - "$LIB" <<'EOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.vkd3d_shader_get_version.restype = ctypes.c_char_p
print("[vkd3d-setup] library reports:", lib.vkd3d_shader_get_version(None, None).decode())
EOF
}

# --- python binding -------------------------------------------------------------

install_python_vulkan() {
    local out
    if "$PYTHON" - 2>/dev/null <<'EOF'; then
import importlib.metadata as md, sys
major, minor = (int(x) for x in md.version("vulkan").split(".")[:2])
sys.exit(0 if (major, minor) >= (1, 3) else 1)
EOF
        log "python module vulkan>=1.3 already installed for $PYTHON"
        return
    fi
    "$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip"
    log "pip install 'vulkan>=1.3' into $("$PYTHON" -c 'import sys; print(sys.prefix)')"
    if ! out="$("$PYTHON" -m pip install -q --disable-pip-version-check 'vulkan>=1.3' 2>&1)"; then
        if grep -q externally-managed-environment <<<"$out"; then
            log "system python is externally managed; retrying with --break-system-packages"
            "$PYTHON" -m pip install -q --disable-pip-version-check --break-system-packages \
                'vulkan>=1.3'
        else
            printf '%s\n' "$out" >&2
            die "pip install vulkan failed"
        fi
    fi
}

# --- main -------------------------------------------------------------------------

start=$SECONDS
if [ "$BUILD" -eq 1 ]; then
    # shellcheck disable=SC2086
    install_packages $RUNTIME_PKGS $BUILD_PKGS
else
    # shellcheck disable=SC2086
    install_packages $RUNTIME_PKGS
fi
install_python_vulkan
if [ "$BUILD" -eq 1 ]; then
    if [ -f "$LIB" ]; then
        log "already built: $LIB (delete it to rebuild)"
    else
        mkdir -p "$SM5_VKD3D_DIR"
        build_start=$SECONDS
        build_library
        log "built $LIB in $((SECONDS - build_start)) s"
    fi
    check_library
else
    log "--no-build: using Debian's $(vkd3d-compiler --version 2>&1 | head -n 1)"
fi
log "done in $((SECONDS - start)) s"
