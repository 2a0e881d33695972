# chessd container image: a builder stage compiles build/chessd, the runtime
# stage holds only the shared libraries it links against, the binary,
# Stockfish at /usr/games/stockfish (where --engine looks by default), the
# engine of `chessd serve` and `chessd engine`, and Fairy-Stockfish at
# /usr/games/fairy-stockfish (where --variant-engine looks), the variants'.
#
#   docker build -t chessd .                     # pulls debian:bookworm(-slim)
#   make image                                   # buildah, local debootstrapped bases
#   docker run --rm -p 8080:8080 -e CHESSD_REDIS_URL=redis://redis:6379/0 \
#       -e CHESSD_TOKEN_SECRET=... chessd
#   docker run --rm -p 8080:8080 chessd         # no CHESSD_REDIS_URL: the rules API only, no games
#   docker run --rm -p 8080:8080 -e CHESSD_ENGINE= chessd   # no engine: the engine routes answer 503
#   docker run --rm --entrypoint chessd -e CHESSD_REDIS_URL=... -e CHESSD_TOKEN_SECRET=... chessd engine
#                                                # an engine worker: /healthz, /readyz, /metrics only
#
# BASE and RUNTIME_BASE can point at other Debian 12 images (make image passes
# localhost/debian:bookworm and localhost/debian:bookworm-slim).
ARG BASE=debian:bookworm
ARG RUNTIME_BASE=debian:bookworm-slim
# libmicrohttpd is pinned, in both stages, to the version chessd is tested
# with: the strict reader (api/http/wire.c) defines recv() and close(), which
# libmicrohttpd calls, and relies on how 0.9.75 reads and closes a connection
# (see api/http/wire.h and acceptor.h). Another version is a change to test
# first, not an upgrade that arrives with a rebuild.
ARG MHD_VERSION=0.9.75-6
# Stockfish is pinned too, to the version `make run` installs on Debian 12:
# the strengths of the levels of play (api/engine/levels.h) are measured on
# it (tests/bench/engine_match), and another version plays at other
# strengths for the same settings.
ARG STOCKFISH_VERSION=15.1-4
# Fairy-Stockfish likewise: the variants the computer plays are those its
# UCI_Variant option lists (11.1 has no atomic), and the variants' levels are
# checked on it (make bench-levels).
ARG FAIRY_STOCKFISH_VERSION=11.1-1+b1

FROM ${BASE} AS build
ARG MHD_VERSION
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc libc6-dev make binutils pkg-config \
        libmicrohttpd-dev=${MHD_VERSION} libmicrohttpd12=${MHD_VERSION} \
        libcjson-dev libhiredis-dev libssl-dev libedit-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Makefile openapi.yaml ./
# The Makefile includes these two fragments (image and fuzz targets).
COPY k8s/image/image.mk k8s/image/
COPY tests/fuzz/fuzz.mk tests/fuzz/
COPY api/ api/
COPY rules/ rules/
COPY store/ store/
# Plain make only builds (it installs nothing; the libraries come from the
# apt-get above, their flags from pkg-config).
RUN make -j"$(nproc)" BUILD=build CC=gcc CFLAGS=-O3 build/chessd \
 && strip --strip-unneeded build/chessd \
 && ./build/chessd --version

# libedit2: the line editing of `chessd play`, linked into the one binary.
# ca-certificates: the system CAs that verify a managed Redis's certificate
# (rediss:// without --redis-ca-file). stockfish: /usr/games/stockfish, a
# run-time dependency like the libraries (it adds about 47 MB); fairy-stockfish:
# /usr/games/fairy-stockfish, the variants' engine (--variant-engine).
FROM ${RUNTIME_BASE}
ARG MHD_VERSION
ARG STOCKFISH_VERSION
ARG FAIRY_STOCKFISH_VERSION
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libmicrohttpd12=${MHD_VERSION} libcjson1 libhiredis0.14 libssl3 libedit2 ca-certificates \
        stockfish=${STOCKFISH_VERSION} fairy-stockfish=${FAIRY_STOCKFISH_VERSION} \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --gid 10001 chessd \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin --no-log-init chessd
COPY --from=build /src/build/chessd /usr/local/bin/chessd
LABEL org.opencontainers.image.title="chessd" \
      org.opencontainers.image.description="Chess rules HTTP/JSON service"
USER 10001
EXPOSE 8080
ENTRYPOINT ["chessd", "serve"]
