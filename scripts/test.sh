#!/usr/bin/env bash
# The project's test command: installs the real target servers the tests use
# (pinned npm packages), then vets and runs every test with the race
# detector. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-targets.sh
bash scripts/install-browser.sh
export MCP_CONFORM_REQUIRE_TARGETS=1

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.targets/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
# The jobs beside the main test run: go vet, the release platforms' builds,
# the nested module's tests and the npm package's tests start in the
# background as the main `go test` does (which spends most of its time
# waiting on the servers its tests start), each with its output in a file,
# printed with its exit status once the main run and the fuzzing have ended;
# any failure fails the script, after every job has ended.
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=() pids=()
beside() {
  local name=$1
  shift
  ( set -euo pipefail; "$@" ) >"$logs/$name.log" 2>&1 &
  names+=("$name")
  pids+=("$!")
}

# The release platforms build (Unix-only calls sit behind build tags; see
# faultproxy/platform_*.go, procnet/procnet_*.go). Seconds each once the
# build cache holds the platform's standard library; minutes the first time.
cross_builds() {
  for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
    GOOS=${platform%/*} GOARCH=${platform#*/} CGO_ENABLED=0 go build ./... || { echo "cross build $platform failed" >&2; return 1; }
  done
}

# The drop-in test tools (testtools/, README.md in each): the Go package is a
# nested module of its own, outside ./...; the npm package's tests run where
# install-targets.sh copied it, beside the SDK it needs.
testtools_gosdk() {
  cd testtools/gosdk
  GOWORK=off go vet ./...
  for platform in windows/amd64 darwin/arm64; do
    GOOS=${platform%/*} GOARCH=${platform#*/} CGO_ENABLED=0 GOWORK=off go build ./... || { echo "testtools/gosdk: cross build $platform failed" >&2; return 1; }
  done
  GOWORK=off go test -race -count=1 ./...
}

beside vet go vet ./...
beside cross-builds cross_builds
beside testtools-gosdk testtools_gosdk
beside testtools-ts node --test .targets/node_modules/@mcp-conform/testtools/test/

status=0
go test -race -count=1 -timeout 30m ./... "$@" || status=$?

# Fuzz targets, each for a bounded time (FUZZTIME, default 10s), one after
# the other once the unit tests have run, not beside them: a fuzzer takes
# every core, which the tests' timing-sensitive checks need, and a fuzzer
# starved of CPU spends its time on its seed corpus (testdata/fuzz/ in each
# package) instead of fuzzing.
for target in ./jsonrpc:FuzzParse ./sse:FuzzReader ./faultproxy:FuzzParseRules; do
  pkg=${target%%:*} fn=${target#*:}
  echo "fuzz $fn ($pkg) for ${FUZZTIME:-10s}"
  go test -run='^$' -fuzz="^${fn}\$" -fuzztime="${FUZZTIME:-10s}" "$pkg" || { echo "fuzz $fn failed" >&2; status=1; }
done

failed=()
for i in "${!names[@]}"; do
  job_status=0
  wait "${pids[$i]}" || job_status=$?
  echo "=== ${names[$i]} (exit $job_status)"
  cat "$logs/${names[$i]}.log"
  if [ "$job_status" -ne 0 ]; then
    failed+=("${names[$i]}")
  fi
done
if [ "$status" -ne 0 ]; then
  failed=("go test or fuzzing (exit $status)" "${failed[@]}")
fi
if [ "${#failed[@]}" -ne 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
