#!/usr/bin/env bash
# bench/compare.sh — the same-run comparison of issue 17: direct, toxiproxy
# v2.12.0 (no toxic) and `mcp-conform proxy --url` (no rule), against the
# same Go echo server with the same client, measured alternately in one run
# by bench/cmd/proxycmp, and written into bench/RESULTS.md (the section
# between the "compare:begin" and "compare:end" markers; the rest of the
# file is left as it is).
#
#   bash bench/compare.sh                 7 rounds, at most ~150 s of rounds
#   bash bench/compare.sh --rounds 3      fewer rounds
#   bash bench/compare.sh --quick         a smoke run (small sizes, 2 rounds)
#   BENCH_RESULTS=/tmp/r.md bash bench/compare.sh   write another file
#   TOXIPROXY=/path/to/server bash bench/compare.sh use a built toxiproxy
#   bash bench/run.sh --compare           the same, from bench/run.sh
#
# Bounded: go install of toxiproxy 300 s, the rounds --budget seconds (no
# round starts after it), proxycmp stops itself 90 s past it; every process
# runs in its own process group and is killed on exit.
#
# toxiproxy is built from the Go module proxy into a temporary GOBIN and
# removed with it; its code is never part of this repository.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${BENCH_RESULTS:-$ROOT/bench/RESULTS.md}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
ROUNDS=7
BUDGET=150
QUICK=()
TOXI_VERSION=v2.12.0
while (($#)); do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--budget) BUDGET=$2; shift 2 ;;
	--quick) QUICK=(-quick); ROUNDS=2; shift ;;
	-h | --help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "bench/compare.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

step() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench/compare.sh: FAILED: %s\n' "$*" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conform-compare.XXXXXX")
cleanup() {
	local rc=$?
	if ((rc == 0)); then rm -rf "$TMP"; else echo "bench/compare.sh: logs kept in $TMP" >&2; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v go >/dev/null || die "go is not on PATH"
command -v timeout >/dev/null || die "timeout (coreutils) is not on PATH"
cd "$ROOT"

step "building mcp-conform and bench/cmd/proxycmp"
go build -o "$TMP/mcp-conform" ./cmd/mcp-conform || die "go build ./cmd/mcp-conform"
go build -o "$TMP/proxycmp" ./bench/cmd/proxycmp || die "go build ./bench/cmd/proxycmp"

TOXI=${TOXIPROXY:-}
if [[ -z $TOXI ]]; then
	step "building toxiproxy $TOXI_VERSION (go install, into a temporary GOBIN)"
	mkdir -p "$TMP/gobin"
	(cd "$TMP" && GOBIN="$TMP/gobin" GOFLAGS=-mod=mod timeout 300 \
		go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXI_VERSION") >"$TMP/toxi-build.log" 2>&1 ||
		die "go install toxiproxy $TOXI_VERSION: $(tail -n5 "$TMP/toxi-build.log")"
	TOXI=$TMP/gobin/server
fi
[[ -x $TOXI ]] || die "no toxiproxy server binary at $TOXI"
toxi_version="toxiproxy $TOXI_VERSION"
[[ -n ${TOXIPROXY:-} ]] && toxi_version="$TOXIPROXY ($("$TOXI" -version 2>&1 | head -n1))"

commit=unknown
if git rev-parse --short HEAD >/dev/null 2>&1; then
	commit=$(git rev-parse --short HEAD)
	[[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && commit+=" + uncommitted changes"
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
date0=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$(date +%s)

step "measuring: $ROUNDS rounds, at most ${BUDGET} s (direct, toxiproxy, mcp-conform, alternately)"
timeout $((BUDGET + 150)) "$TMP/proxycmp" compare -toxiproxy "$TOXI" -mcp-conform "$TMP/mcp-conform" \
	-rounds "$ROUNDS" -budget "${BUDGET}s" "${QUICK[@]+"${QUICK[@]}"}" \
	-md "$TMP/table.md" -json "$TMP/samples.json" 2> >(tee "$TMP/proxycmp.err" >&2) ||
	die "proxycmp failed: $(tail -n5 "$TMP/proxycmp.err")"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(($(date +%s) - t0))

cat >"$TMP/section.md" <<EOF
<!-- compare:begin (written by bench/compare.sh; edit outside the markers) -->
## HTTP proxy cost: direct, toxiproxy and mcp-conform in one run

\`bash bench/compare.sh --rounds $ROUNDS\` (or \`bash bench/run.sh --compare\`) at $date0, tree $commit,
$(nproc) CPUs, load average $load0 at the start and $load1 at the end, ${elapsed} s in all.
The three paths share one Go echo server (\`proxycmp echo\`) and one Go client;
toxiproxy is $toxi_version (built with \`go install
github.com/Shopify/toxiproxy/v2/cmd/server@$TOXI_VERSION\` unless TOXIPROXY names one; one proxy, no toxic);
mcp-conform is \`mcp-conform proxy --url\` with no rule (it still frames every POST
body, JSON answer and SSE event as a message and records the transcript). Each
round measures every metric on direct, toxiproxy and mcp-conform in turn; a
cell is the median of the rounds with (min–max); a ratio is taken within a
round (proxied ÷ direct: above 1 is slower for times, below 1 is slower for
rates) and the median of those is given, with the value; "mcp-conform ÷
toxiproxy" is the per-round ratio of the two proxies (at or better: ≤ 1 for
times and CPU, ≥ 1 for rates). Proxy CPU is the proxy process's own CPU time
(user + system of all its threads, from /proc/PID/task/*/schedstat) over
the measurement, per request or event: it hardly moves with the machine's
load, where wall times do. **Quote ratios, not single times**: the machine
is shared. The stdio row compares \`mcp-conform proxy -- cat\` with a plain Go
line relay process (\`proxycmp relay -- cat\`) in the toxiproxy column.

EOF
cat "$TMP/table.md" >>"$TMP/section.md"
echo '<!-- compare:end -->' >>"$TMP/section.md"

step "writing $OUT"
python3 - "$OUT" "$TMP/section.md" <<'PY' || die "writing $OUT failed"
import sys
out, sec = sys.argv[1], open(sys.argv[2]).read().rstrip("\n") + "\n"
try:
    old = open(out).read()
except FileNotFoundError:
    old = "# Benchmark results\n"
b, e = old.find("<!-- compare:begin"), old.find("<!-- compare:end -->")
if b >= 0 and e > b:
    new = old[:b] + sec + old[e + len("<!-- compare:end -->\n"):]
else:
    # After the title and the lines before the first section.
    i = old.find("\n## ")
    new = (old + "\n" + sec) if i < 0 else old[:i + 1] + sec + "\n" + old[i + 1:]
open(out, "w").write(new)
PY
step "done in ${elapsed} s: $OUT"
