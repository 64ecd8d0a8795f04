#!/usr/bin/env bash
# Installs the Debian 12 packages cuckood needs to build, run and test.
# Only what is missing is installed; needs root (or sudo) for that.
#   scripts/deps.sh          build and run
#   scripts/deps.sh test     also what the tests use
#   scripts/deps.sh image    what scripts/image.sh and the image test use
#                            (podman; mmdebstrap, debootstrap as the
#                            fallback, for base images)
set -euo pipefail

# libjemalloc-dev: only for -DCUCKOOD_ALLOCATOR=jemalloc, the allocator
# bench/bench_memory.sh compares against.
pkgs=(gcc make cmake pkg-config libuv1-dev libhiredis-dev libxxhash-dev
      libssl-dev libjemalloc-dev)
if [ "${1:-}" = image ]; then
    pkgs=(podman mmdebstrap debootstrap iproute2 redis-tools python3
          python3-pytest)
elif [ "${1:-}" = test ]; then
    pkgs+=(libcmocka-dev redis-tools redis-server python3 python3-redis python3-pytest
           openssl postgresql python3-psycopg2
           clang clang-format libclang-rt-dev prometheus-redis-exporter)
    command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
    command -v npm >/dev/null 2>&1 || pkgs+=(npm)
fi

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "deps.sh: installing packages needs root: run as root or" \
             "install sudo (missing: ${missing[*]})" >&2
        exit 1
    fi
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
