# cuckood: a cuckoo-filter membership server speaking the Redis protocol.
#
#   docker build -t cuckood .
#   docker run -p 6379:6379 -v cuckood-data:/data cuckood
#   docker run cuckood --requirepass s3cret      (arguments are appended)
#
# See docs/operations.md for compose and Kubernetes examples.

# ---- builder: Debian 12 with the build and unit-test dependencies ----------
# With --no-install-recommends gcc does not bring libc6-dev (crt files, libc
# headers): it is named. python3 runs the layering check, a unit test. The
# format check is a property of the sources, not of a build: CI runs it,
# the image does not need clang-format for it.
FROM debian:bookworm AS builder
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc libc6-dev make cmake pkg-config python3 \
        libuv1-dev libhiredis-dev libxxhash-dev libcmocka-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
# Names the stage's images, so that scripts/image.sh can drop those of
# earlier builds (the layers above stay cached).
LABEL org.cuckood.stage=builder
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCUCKOOD_WERROR=ON -DCUCKOOD_BENCH=OFF -DCUCKOOD_TESTS=ON \
    && cmake --build build -j"$(nproc)" \
    && ctest --test-dir build -L unit -E '^unit\.check_format$' \
        --output-on-failure \
    && bash scripts/image_root.sh /rootfs build/server/cuckood \
        build/tools/cuckood-load \
    && mkdir /rootfs-data

# ---- runtime: an empty base with the programs and their libraries ----------
# The server (its health probe is `cuckood --ping`) and the loader
# cuckood-load, in /usr/local/bin, which is on the engines' default PATH.
# No shell, no package manager, no libraries beyond what ldd lists for the
# programs (glibc, libuv, hiredis, xxHash, OpenSSL) and the dynamic loader;
# /etc/passwd and /etc/group name uid 10001; /var/lib/dpkg/status lists the
# Debian packages the libraries come from, for image scanners.
FROM scratch
COPY --from=builder /rootfs/ /
COPY --from=builder --chown=10001:10001 /rootfs-data/ /data/
USER 10001:10001
WORKDIR /data
VOLUME /data
EXPOSE 6379

# The server is PID 1 (exec form, no shell): docker stop's SIGTERM reaches
# it, and it saves the snapshot in /data before it exits.
STOPSIGNAL SIGTERM
# The probe reads the image's config file (port, bind, unixsocket,
# requirepass) and the address the running server leaves in /data, so
# arguments given to `docker run IMAGE --port 7000` reach it too.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["cuckood", "/etc/cuckood/cuckood.conf", "--ping"]
# ACL users: mount an aclfile at /etc/cuckood/acl/users.acl and run the
# image with "--aclfile /etc/cuckood/acl/users.acl" (docs/operations.md).
ENTRYPOINT ["cuckood", "/etc/cuckood/cuckood.conf"]
