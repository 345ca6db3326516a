#!/usr/bin/env bash
# bench/profile.sh — CPU and allocation profiles of the proxy's hot paths,
# as text (go tool pprof -top), into bench/profiles/. The binary profiles
# stay in a temporary directory and are removed.
#
#   stdio-roundtrip   BenchmarkStdioRoundTrip/proxy   (in-process link, echo child)
#   http-json         BenchmarkHTTPRoundTrip/proxy    (tools/call, JSON answer)
#   sse-stream        BenchmarkHTTPSSEThroughput/proxy (10 000 × 200 B events)
#
# For each: NAME.cpu.txt (flat top, then cumulative top focused on the
# proxy's own code) and NAME.alloc.txt (alloc_space and alloc_objects).
# Usage: bench/profile.sh [BENCHTIME]   (default 3s; about 1 minute)
#   PROFILE_REV=REV PROFILE_OUT=DIR bench/profile.sh   profiles the faultproxy
#   of git revision REV instead (built from git archive), into DIR
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${PROFILE_OUT:-$ROOT/bench/profiles}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
BT=${1:-3s}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conform-prof.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
mkdir -p "$OUT"
if [[ -n ${PROFILE_REV:-} ]]; then
	commit=$(git rev-parse --short "$PROFILE_REV")
	mkdir "$TMP/src"
	git archive "$PROFILE_REV" | tar -x -C "$TMP/src"
	(cd "$TMP/src" && go test -c -o "$TMP/fp.test" ./faultproxy/)
	cd "$TMP/src"
else
	go test -c -o "$TMP/fp.test" ./faultproxy/
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	[[ -n $(git status --porcelain -- faultproxy sse 2>/dev/null) ]] && commit+=" + uncommitted changes"
fi

prof() { # NAME BENCH FOCUS
	local name=$1 bench=$2 focus=$3
	local head="# $name: $bench, -benchtime $BT, tree $commit, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
	(cd faultproxy && "$TMP/fp.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$BT" -test.benchmem \
		-test.cpuprofile "$TMP/$name.cpu" -test.memprofile "$TMP/$name.mem" >"$TMP/$name.out")
	{
		echo "$head"
		grep '^Benchmark' "$TMP/$name.out"
		echo
		echo "## go tool pprof -top -nodecount 30 (flat)"
		go tool pprof -top -nodecount 30 "$TMP/fp.test" "$TMP/$name.cpu" 2>/dev/null | sed -n '/^Duration/,$p'
		echo
		echo "## go tool pprof -top -cum -nodecount 40 -focus '$focus' (the proxy's own path)"
		go tool pprof -top -cum -nodecount 40 -focus "$focus" "$TMP/fp.test" "$TMP/$name.cpu" 2>/dev/null | sed -n '/^Duration/,$p'
	} >"$OUT/$name.cpu.txt"
	{
		echo "$head"
		grep '^Benchmark' "$TMP/$name.out"
		for s in alloc_space alloc_objects; do
			echo
			echo "## go tool pprof -sample_index=$s -top -nodecount 25 -focus '$focus'"
			go tool pprof -sample_index=$s -top -nodecount 25 -focus "$focus" "$TMP/fp.test" "$TMP/$name.mem" 2>/dev/null | sed -n '/^Showing nodes/,$p'
		done
	} >"$OUT/$name.alloc.txt"
	echo "wrote $OUT/$name.cpu.txt and $name.alloc.txt" >&2
}

prof stdio-roundtrip '^BenchmarkStdioRoundTrip$/^proxy$' 'faultproxy\.\(\*Link\)\.pump'
prof http-json '^BenchmarkHTTPRoundTrip$/^proxy$' 'faultproxy\.\(\*HTTP\)\.ServeHTTP'
prof sse-stream '^BenchmarkHTTPSSEThroughput$/^proxy$' 'faultproxy\.\(\*HTTP\)\.ServeHTTP'
