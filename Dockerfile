# syntax=docker/dockerfile:1
# The aiadmit webhook image: built on Debian 12, run on Debian 12 slim as a
# non-root user, holding the binary and the default profiles only.
#
#   docker build -t REGISTRY/aiadmit:0.1.0 .

FROM debian:12-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      g++ cmake make pkg-config \
      libcpp-httplib-dev rapidjson-dev libyaml-cpp-dev libspdlog-dev libssl-dev libboost-dev \
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

FROM debian:12-slim
# The shared libraries the binary links against (with their dependencies).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcpp-httplib0.11 libspdlog1.10 libyaml-cpp0.7 libssl3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/aiadmit /usr/local/bin/aiadmit
# Found by the binary as ../share/aiadmit/profiles; in a cluster the profiles
# ConfigMap is passed with --profiles instead.
COPY --from=build /src/profiles/ /usr/local/share/aiadmit/profiles/
# Numeric, so that Kubernetes can verify runAsNonRoot.
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/aiadmit"]
CMD ["serve", "--tls-cert=/etc/aiadmit/tls/tls.crt", "--tls-key=/etc/aiadmit/tls/tls.key"]
