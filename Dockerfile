# syntax=docker/dockerfile:1
# The aiadmit webhook image: built on Debian 12, run as a non-root user from
# scratch, holding the binary, the Debian 12 libraries it loads and the
# default profiles only.
#
#   docker build -t REGISTRY/aiadmit:0.1.0 .
#
# Debian 12 is pinned by the digest of its multi-platform image index, so
# that a build uses the same base until the digest is changed here on
# purpose (both FROM lines; the official image's digests are listed by
# `docker buildx imagetools inspect debian:12-slim`).

FROM debian:12-slim@sha256:abd67ffcfa541b485a3dff59865ab629aa048a6c613e639d36e7456b0b229241 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      g++ cmake make pkg-config \
      libcpp-httplib-dev nlohmann-json3-dev rapidjson-dev libyaml-cpp-dev libspdlog-dev libssl-dev \
      libboost-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY webhook/ webhook/
COPY mutators/ mutators/
COPY validators/ validators/
COPY profiles/ profiles/
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
      -DAIADMIT_BUILD_TESTS=OFF -DAIADMIT_BUILD_BENCH=OFF \
 && cmake --build build -j"$(nproc)" --target aiadmit \
 && strip build/aiadmit \
 && build/aiadmit profiles lint profiles

# The runtime's files under /rootfs: the binary, the profiles, and the
# shared libraries the binary loads (the dynamic loader among them), copied
# from the Debian packages installed here, as ldd resolves them.
FROM debian:12-slim@sha256:abd67ffcfa541b485a3dff59865ab629aa048a6c613e639d36e7456b0b229241 AS files
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcpp-httplib0.11 libspdlog1.10 libyaml-cpp0.7 libssl3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/aiadmit /rootfs/usr/local/bin/aiadmit
# Found by the binary as ../share/aiadmit/profiles; in a cluster the profiles
# ConfigMap is passed with --profiles instead.
COPY --from=build /src/profiles/ /rootfs/usr/local/share/aiadmit/profiles/
RUN ldd /rootfs/usr/local/bin/aiadmit | grep -o '/[^ ]*' | sort -u \
      | xargs -I{} cp --parents --dereference {} /rootfs/ \
 && /rootfs/usr/local/bin/aiadmit profiles lint /rootfs/usr/local/share/aiadmit/profiles

# No shell, no package manager, no other program: the binary, its libraries
# and the profiles alone.
FROM scratch
COPY --from=files /rootfs/ /
# Numeric, so that Kubernetes can verify runAsNonRoot.
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/aiadmit"]
CMD ["serve", "--tls-cert=/etc/aiadmit/tls/tls.crt", "--tls-key=/etc/aiadmit/tls/tls.key"]
