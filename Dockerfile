# cuckood: a cuckoo-filter membership server speaking the Redis protocol.
#
#   docker build -t cuckood .
#   docker run -p 6379:6379 -v cuckood-data:/data cuckood
#   docker run cuckood --requirepass s3cret      (arguments are appended)
#
# See docs/operations.md for compose and Kubernetes examples.

# ---- builder: Debian 12 with the build and unit-test dependencies ----------
FROM debian:bookworm AS builder
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc make cmake pkg-config \
        libuv1-dev libhiredis-dev libxxhash-dev libcmocka-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCUCKOOD_WERROR=ON -DCUCKOOD_BENCH=OFF -DCUCKOOD_TESTS=ON \
    && cmake --build build -j"$(nproc)" \
    && ctest --test-dir build -L unit --output-on-failure \
    && strip build/server/cuckood

# ---- runtime: slim Debian 12 with only the shared libraries ----------------
FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libuv1 libhiredis0.14 libxxhash0 libssl3 \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 cuckood \
    && useradd --system --uid 10001 --gid cuckood --home-dir /data \
        --no-create-home --shell /usr/sbin/nologin cuckood \
    && mkdir -p /data /etc/cuckood \
    && chown cuckood:cuckood /data
COPY --from=builder /src/build/server/cuckood /usr/local/bin/cuckood
COPY conf/docker.conf /etc/cuckood/cuckood.conf

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
ENTRYPOINT ["cuckood", "/etc/cuckood/cuckood.conf"]
