#!/bin/sh
# Install what the real-browser test of the report needs: Debian's chromium (with its driver)
# and playwright's Python API, which drives that chromium through executable_path.
# Playwright's own browser download ("playwright install") is deliberately not used.
set -eu

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium chromium-driver fonts-dejavu-core

PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install "playwright>=1.40"

chromium --version
"$PYTHON" -c "import playwright; print('playwright', 'ok')"
