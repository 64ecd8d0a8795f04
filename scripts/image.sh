#!/usr/bin/env bash
# Builds the container image from the Dockerfile:
#   bash scripts/image.sh [tag]            (default tag: cuckood:latest)
# with docker when a docker daemon answers, otherwise with podman (installed
# by scripts/deps.sh image when missing); IMAGE_ENGINE=podman|docker picks
# one. The engine used is printed last, as "engine: <name>".
#
# Base image: the builder stage's debian:bookworm is used from the engine's
# store, else pulled (the runtime stage starts from scratch); when no
# registry can be reached it is made locally from Debian's archive with
# mmdebstrap, else debootstrap (the minbase variant, as Debian's official
# images are), once per machine: later runs find it in the store, and the
# engine's layer cache keeps the builder's packages. IMAGE_REBASE=1 makes
# it again (for newer Debian point releases).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tag=${1:-cuckood:latest}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

log() { echo "image.sh: $*" >&2; }

docker_works() {
    command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1
}

engine=${IMAGE_ENGINE:-}
if [ -z "$engine" ]; then
    if docker_works; then
        engine=docker
    else
        engine=podman
    fi
fi
case "$engine" in
    podman)
        command -v podman >/dev/null 2>&1 || bash scripts/deps.sh image
        # chroot isolation builds without an OCI runtime (none is needed for
        # RUN steps, and crun cannot start containers on every machine);
        # the docker format keeps HEALTHCHECK, which OCI images cannot hold.
        build=(podman build --isolation chroot --format docker)
        ;;
    docker)
        docker_works || { log "no docker daemon answers"; exit 1; }
        build=(docker build)
        ;;
    *) log "IMAGE_ENGINE must be podman or docker"; exit 1 ;;
esac

have_image() { "$engine" image inspect "$1" >/dev/null 2>&1; }

# The registry's base image, or the same made by mmdebstrap: the default
# (minbase) package set, the archive's sources with updates and security,
# no package cache or lists.
make_bases() {
    command -v mmdebstrap >/dev/null 2>&1 ||
        command -v debootstrap >/dev/null 2>&1 || bash scripts/deps.sh image
    local tmp rootfs
    tmp=$(mktemp -d)
    # --one-file-system: never into anything the tools left mounted.
    trap 'rm -rf --one-file-system "$tmp"' EXIT
    rootfs="$tmp/rootfs"
    local t0=$(date +%s) made=""
    # mmdebstrap makes the same minbase root as debootstrap (Essential:yes
    # packages and apt) faster: apt downloads in parallel and dpkg installs
    # in a few runs, not package by package, here without an fsync per file
    # (a root that is thrown away on failure needs none). Its merged-usr
    # hook sets up the merged /usr as debootstrap does; without it the
    # usrmerge package would pull perl into the base. debootstrap is the
    # fallback, where mmdebstrap is missing or fails.
    if command -v mmdebstrap >/dev/null 2>&1; then
        log "making debian:bookworm with mmdebstrap from $mirror"
        if mmdebstrap --variant=minbase --dpkgopt=force-unsafe-io \
            --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
            bookworm "$rootfs" "$mirror" >"$tmp/mmdebstrap.log" 2>&1; then
            # The images' own dpkg and apt keep their defaults.
            rm -f "$rootfs"/etc/dpkg/dpkg.cfg.d/99mmdebstrap \
                "$rootfs"/etc/apt/apt.conf.d/99mmdebstrap
            made=mmdebstrap
        else
            tail -20 "$tmp/mmdebstrap.log" >&2
            log "mmdebstrap failed; trying debootstrap"
            rm -rf --one-file-system "$rootfs"
        fi
    fi
    if [ -z "$made" ]; then
        command -v debootstrap >/dev/null 2>&1 ||
            { log "neither mmdebstrap nor debootstrap works"; exit 1; }
        log "making debian:bookworm with debootstrap from $mirror"
        debootstrap --variant=minbase bookworm "$rootfs" "$mirror" \
            >"$tmp/debootstrap.log" 2>&1 ||
            { tail -20 "$tmp/debootstrap.log" >&2; exit 1; }
        made=debootstrap
    fi
    rm -f "$rootfs"/var/cache/apt/archives/*.deb \
        "$rootfs"/var/cache/apt/*.bin "$rootfs"/etc/apt/sources.list
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
        "$rootfs"/tmp/* "$rootfs"/root/.bash_history
    cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    : >"$rootfs/etc/machine-id"
    # As Debian's images do: apt keeps no downloaded packages and no binary
    # caches, so they never end up in a layer.
    cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    import "$rootfs" debian:bookworm
    log "made the base image with $made in $(($(date +%s) - t0)) s"
    rm -rf --one-file-system "$tmp"
    trap - EXIT
}

import() {
    # The same name the Dockerfile's FROM resolves to, with the official
    # images' default command.
    tar -C "$1" --numeric-owner -cf - . |
        "$engine" import --change 'CMD ["bash"]' - "docker.io/library/$2" \
            >/dev/null
    log "imported $2 ($("$engine" image inspect --format '{{.Size}}' \
        "docker.io/library/$2") bytes)"
}

need_bases=0
[ "${IMAGE_REBASE:-0}" = 1 ] && need_bases=1
for base in debian:bookworm; do
    have_image "$base" && continue
    if [ "$need_bases" = 0 ] && timeout 120 "$engine" pull -q "$base" \
        >/dev/null 2>&1; then
        log "pulled $base"
        continue
    fi
    need_bases=1
done
[ "$need_bases" = 1 ] && make_bases

# What earlier builds leave behind: the builder stage's last image and the
# image the tag named. Removed after a successful build; their layers that
# the new build shares (the builder's packages) stay.
stale=$("$engine" images -q --filter dangling=true \
    --filter label=org.cuckood.stage=builder)
old=$("$engine" image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)

log "building $tag with ${build[*]}"
start=$(date +%s)
"${build[@]}" -t "$tag" .
log "built $tag in $(($(date +%s) - start)) s"
new=$("$engine" image inspect --format '{{.Id}}' "$tag")
[ -n "$old" ] && [ "$old" != "$new" ] && stale="$stale $old"
for id in $stale; do
    "$engine" rmi "$id" >/dev/null 2>&1 || true
done
echo "engine: $engine"
