#!/usr/bin/env bash
# Runs the whole test suite. GPU tests need a Vulkan driver; on a machine without one this
# installs Mesa's software driver (lavapipe) when it can (root + apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."

have_vulkan_driver() {
    [ -n "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && return 0
    ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1
}

if ! have_vulkan_driver; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "no Vulkan driver found: installing mesa-vulkan-drivers (lavapipe)" >&2
        # A first install once failed with a transient dpkg error: retry once.
        for attempt in 1 2; do
            if apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q mesa-vulkan-drivers; then
                break
            fi
            [ "$attempt" = 2 ] && { echo "could not install mesa-vulkan-drivers" >&2; exit 1; }
            sleep 5
        done
    else
        echo "warning: no Vulkan driver found and cannot install one; GPU tests will not run" >&2
    fi
fi

# Silence "XDG_RUNTIME_DIR is invalid" from the Vulkan loader on headless machines.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "${XDG_RUNTIME_DIR}" ]; then
    export XDG_RUNTIME_DIR="$(mktemp -d)"
    chmod 700 "$XDG_RUNTIME_DIR"
fi

cargo test --workspace "$@"

# The Python package (python/): built into a virtual environment under target/ and tested
# with pytest against SciPy, when Python 3 is here. KRYLOV_SKIP_PYTHON=1 skips it.
python_tests() {
    if [ "${KRYLOV_SKIP_PYTHON:-0}" = 1 ]; then
        echo "KRYLOV_SKIP_PYTHON=1: skipping the Python package's tests" >&2
        return 0
    fi
    if ! command -v python3 >/dev/null; then
        echo "python3 not found: skipping the Python package's tests" >&2
        return 0
    fi
    local venv=target/python-venv
    if [ ! -x "$venv/bin/python" ]; then
        rm -rf "$venv"
        if ! python3 -m venv "$venv" 2>/dev/null; then
            # Debian's python3 comes without venv.
            if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
                rm -rf "$venv"
                apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv
                python3 -m venv "$venv"
            else
                echo "warning: python3 has no venv module (apt-get install python3-venv): skipping the Python package's tests" >&2
                return 0
            fi
        fi
    fi
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.9,<2" numpy scipy pytest
    # maturin develop builds with cargo's dev profile, reusing what `cargo test` just built.
    (cd python && VIRTUAL_ENV="$PWD/../$venv" PATH="$PWD/../$venv/bin:$PATH" maturin develop -q)
    "$venv/bin/python" -m pytest -q python/tests
}
python_tests
