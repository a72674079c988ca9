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
