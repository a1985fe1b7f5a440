# clusterd image: clusterd, clusterctl, clustersim and npu-agent (stripped) with the data files
# in /opt/clusterd/share/clusterd; the dashboard is compiled into clusterd. Build:
#   docker build -t clusterd:0.1.0 .
# Stage 1 builds with the project's own package list (scripts/setup.sh).
FROM debian:12 AS build
WORKDIR /src
COPY scripts/setup.sh scripts/apt_install.sh scripts/
RUN bash scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX=/opt/clusterd \
 && cmake --build /build --target clusterd clusterctl clustersim npu-agent \
 && cmake --install /build --strip \
 && ldd /opt/clusterd/bin/* | awk '/=> \//{print $3}' | sort -u \
      | xargs -r dpkg -S | cut -d: -f1 | sort -u > /opt/clusterd/runtime-packages

# Stage 2: the Debian runtime libraries the binaries link, nothing else.
FROM debian:12-slim
COPY --from=build /opt/clusterd /opt/clusterd
RUN apt-get update -qq \
 && xargs -a /opt/clusterd/runtime-packages apt-get install -y -qq --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /opt/clusterd/runtime-packages \
 && groupadd --gid 9000 clusterd && useradd --uid 9000 --gid 9000 --no-create-home clusterd
ENV PATH=/opt/clusterd/bin:$PATH
USER 9000:9000
EXPOSE 8899 11251
ENTRYPOINT ["clusterd"]
