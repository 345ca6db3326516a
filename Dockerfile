# mcp-conform in a container, with Node.js so that servers started with
# npx (or node) run beside it. Build and run (see README, "Docker"):
#
#   docker build -t mcp-conform --build-arg VERSION=$(git describe --tags --always) .
#   docker run --rm -v "$PWD:/work" mcp-conform run --stdio "npx -y @modelcontextprotocol/server-everything"
ARG GO_VERSION=1.26
ARG NODE_VERSION=22

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version, commit and date "mcp-conform version" prints (the build
# context has no .git, so the build info cannot say).
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/mcp-conform ./cmd/mcp-conform && \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" \
      -o /out/mcp-conform-reference ./cmd/mcp-conform-reference

FROM node:${NODE_VERSION}-bookworm-slim
COPY --from=build /out/mcp-conform /out/mcp-conform-reference /usr/local/bin/
# The slim reference server beside mcp-conform, built in the same stage:
# the built-in target's check runs start it (internal/refbin), without a
# build comparison that needs VCS information this build has not.
ENV MCP_CONFORM_REFERENCE_BIN=beside
# npx's cache somewhere any user may write (docker run --user UID:GID).
ENV npm_config_cache=/tmp/npm-cache NO_UPDATE_NOTIFIER=1
USER node
WORKDIR /work
ENTRYPOINT ["mcp-conform"]
CMD ["--help"]
