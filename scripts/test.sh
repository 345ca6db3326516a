#!/usr/bin/env bash
# The project's test command: installs the real target servers the tests use
# (pinned npm packages), then vets and runs every test with the race
# detector. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# The release platforms build (Unix-only calls sit behind build tags; see
# faultproxy/platform_*.go, procnet/procnet_*.go). Seconds each once the
# build cache holds the platform's standard library; minutes the first time.
# They compile only, so they go in the background while the installs below
# wait on the network, gofmt reads and vet compiles; the script joins them
# (and fails on theirs) before any test runs, so no test shares the machine
# with them.
cross_log=$(mktemp)
(
  for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
    GOOS=${platform%/*} GOARCH=${platform#*/} CGO_ENABLED=0 go build ./... || { echo "cross build $platform failed" >&2; exit 1; }
  done
) >"$cross_log" 2>&1 &
cross_pid=$!
join_cross() {
  if ! wait "$cross_pid"; then
    cat "$cross_log" >&2
    rm -f "$cross_log"
    exit 1
  fi
  cross_pid=
  cat "$cross_log"
  rm -f "$cross_log"
}
# An early exit (a failed install, gofmt, vet) stops the builds.
trap '[ -z "$cross_pid" ] || kill "$cross_pid" 2>/dev/null || true' EXIT

bash scripts/install-targets.sh
bash scripts/install-browser.sh
export MCP_CONFORM_REQUIRE_TARGETS=1

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.targets/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
join_cross
go test -race -count=1 -timeout 45m ./... "$@"

# The drop-in test tools (testtools/, README.md in each): the Go package is a
# nested module of its own, outside ./...; the npm package's tests run where
# install-targets.sh copied it, beside the SDK it needs.
(
  cd testtools/gosdk
  GOWORK=off go vet ./...
  for platform in windows/amd64 darwin/arm64; do
    GOOS=${platform%/*} GOARCH=${platform#*/} CGO_ENABLED=0 GOWORK=off go build ./... || { echo "testtools/gosdk: cross build $platform failed" >&2; exit 1; }
  done
  GOWORK=off go test -race -count=1 ./...
)
node --test .targets/node_modules/@mcp-conform/testtools/test/

# Fuzz targets, each for a bounded time (FUZZTIME, default 10s), one after
# the other once the unit tests passed; seed corpora live in each package's
# testdata/fuzz/.
for target in ./jsonrpc:FuzzParse ./sse:FuzzReader ./faultproxy:FuzzParseRules; do
  pkg=${target%%:*} fn=${target#*:}
  echo "fuzz $fn ($pkg) for ${FUZZTIME:-10s}"
  go test -run='^$' -fuzz="^${fn}\$" -fuzztime="${FUZZTIME:-10s}" "$pkg"
done
