#!/usr/bin/env bash
# Set up a working environment in .venv: the project with its test and documentation tools, and
# on request the optional real components (vkd3d-shader on Mesa lavapipe; Chromium for the
# report's browser test).
#
#   bash scripts/setup.sh            the project, its test tools and mkdocs-material
#   bash scripts/setup.sh --vkd3d    + Debian's Vulkan/lavapipe and vkd3d packages, libvkd3d-shader 1.14
#   bash scripts/setup.sh --d3d11    + Debian's Wine, Xvfb, Mesa and mingw-w64; the D3D11 runner
#   bash scripts/setup.sh --dxvk     + what --d3d11 installs, and DXVK's DLLs (Debian trixie's
#                                      dxvk-wine64, unpacked into the cache) for d3d11:dxvk
#   bash scripts/setup.sh --browser  + Debian's Chromium and playwright
#   bash scripts/setup.sh --all      everything
set -euo pipefail
cd "$(dirname "$0")/.."

want_vkd3d=0
want_browser=0
want_d3d11=0
want_dxvk=0
for arg in "$@"; do
  case "$arg" in
    --vkd3d) want_vkd3d=1 ;;
    --browser) want_browser=1 ;;
    --d3d11) want_d3d11=1 ;;
    --dxvk) want_d3d11=1; want_dxvk=1 ;;
    --all) want_vkd3d=1; want_browser=1; want_d3d11=1; want_dxvk=1 ;;
    *) echo "setup.sh: unknown option $arg (expected --vkd3d, --d3d11, --dxvk, --browser, --all)" >&2
       exit 2 ;;
  esac
done

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv"
  "$python" -m venv .venv
fi
echo "setup: installing the project, its test tools and its documentation tools into .venv"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test,docs]'
# The editable install leaves the project's own modules uncompiled; where the environment sets
# PYTHONDONTWRITEBYTECODE, every `sm5` process and test worker would compile them again (seconds
# each). Compiled once here, they are read by every later process and recompiled on any edit.
.venv/bin/python -m compileall -q -j 0 sm5 oracle conformance vectors reports > /dev/null

export PATH="$PWD/.venv/bin:$PATH"
if ((want_vkd3d)); then
  PYTHON="$PWD/.venv/bin/python" bash conformance/vkd3d/setup.sh
fi
if ((want_d3d11)); then
  PYTHON="$PWD/.venv/bin/python" bash conformance/d3d11/setup.sh
fi
if ((want_dxvk)); then
  bash conformance/d3d11/setup-dxvk.sh
fi
if ((want_browser)); then
  bash reports/setup_browser.sh
fi
echo "setup: done"
