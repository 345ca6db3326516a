#!/usr/bin/env bash
# Install the pinned real MCP servers that mcp-conform uses as targets.
#
#   scripts/install-targets.sh            # install (no-op when already installed)
#   scripts/install-targets.sh --force    # reinstall from the lockfile
#
# The packages are pinned in .targets/package.json and locked in
# .targets/package-lock.json (both committed); they are installed with `npm ci`
# into .targets/node_modules/ (git-ignored). Needs node >= 20 and npm.
# Install scripts are not run (--ignore-scripts): the pinned packages ship
# prebuilt dist/ files and need none.
#
# It also builds fixtures/targets/gosdk-server (a small server on the official Go
# SDK, in its own nested Go module pinned by its go.mod/go.sum) into
# .targets/bin/gosdk-server (git-ignored). Needs go; the build is skipped when
# the sources, go.mod, go.sum and the go version are unchanged since the last
# build (--force rebuilds). gosdk-server includes the drop-in test tools of
# testtools/gosdk (a nested module of its own, by a replace directive),
# switched on by MCP_CONFORM_TEST_TOOLS=1 (fixtures/targets/gosdk-testtools*.yaml).
#
# It copies fixtures/targets/ts-server (a small server on the official TypeScript
# SDK, plain ES modules, no build step) into .targets/ts-server/ (git-ignored),
# where node finds the SDK and zod pinned in .targets/package.json; the copy is
# refreshed on every run (a few kB). It imports @mcp-conform/testtools
# (testtools/ts, the drop-in test tools, switched on by MCP_CONFORM_TEST_TOOLS=1
# in fixtures/targets/ts-testtools*.yaml), which is copied into
# .targets/node_modules/@mcp-conform/testtools the same way.
#
# The real clients that `mcp-conform client` grades (TestRealClients) come the
# same ways: fixtures/clients/ts-client (the TypeScript SDK client's driver) is
# copied into .targets/ts-client/, fixtures/clients/gosdk-client (the go-sdk
# client's driver, a nested module pinned like gosdk-server) is built into
# .targets/bin/gosdk-client, with the same stamp.
#
# On success it prints, one per line, "NAME VERSION ENTRY" where ENTRY is the
# server's entry file (or binary) relative to the repository root, e.g.
#   server-everything 2026.8.31 .targets/node_modules/@modelcontextprotocol/server-everything/dist/index.js
#   gosdk-server v1.8.0 .targets/bin/gosdk-server
#   testtools-ts 0.1.0 .targets/node_modules/@mcp-conform/testtools/index.js
#   ts-server 1.32.2 .targets/ts-server/server.mjs
#   ts-client 1.32.2 .targets/ts-client/driver.mjs
#   gosdk-client v1.8.0 .targets/bin/gosdk-client
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
prefix="$root/.targets"

# name | npm package | entry file inside the package
targets=(
  "server-everything|@modelcontextprotocol/server-everything|dist/index.js"
  "typescript-sdk|@modelcontextprotocol/sdk|dist/esm/server/mcp.js"
)

force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  -h|--help) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install-targets: unknown argument: $1" >&2; exit 2 ;;
esac

command -v node >/dev/null 2>&1 || { echo "install-targets: node not found (need node >= 20)" >&2; exit 1; }
command -v npm  >/dev/null 2>&1 || { echo "install-targets: npm not found" >&2; exit 1; }
command -v go   >/dev/null 2>&1 || { echo "install-targets: go not found (needed to build gosdk-server)" >&2; exit 1; }
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "install-targets: node $(node --version) is too old (need >= 20)" >&2
  exit 1
fi

[ -f "$prefix/package.json" ] || { echo "install-targets: missing $prefix/package.json" >&2; exit 1; }

# The stamp records what was installed: the lockfile (or package.json) digest
# and the node major version. Same stamp + entries present => nothing to do.
hash_file() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
if [ -f "$prefix/package-lock.json" ]; then
  want="lock:$(hash_file "$prefix/package-lock.json") node:$node_major"
else
  want="pkg:$(hash_file "$prefix/package.json") node:$node_major"
fi
stamp="$prefix/node_modules/.mcp-conform-installed"

entries_present() {
  local t name pkg entry
  for t in "${targets[@]}"; do
    IFS='|' read -r name pkg entry <<<"$t"
    [ -f "$prefix/node_modules/$pkg/$entry" ] || return 1
  done
}

if [ "$force" -eq 0 ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && entries_present; then
  : # already installed
else
  echo "install-targets: installing into $prefix ..." >&2
  npm_flags=(--prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel=error)
  if [ -f "$prefix/package-lock.json" ]; then
    # npm ci removes node_modules first and installs exactly the lockfile.
    npm ci "${npm_flags[@]}" >&2
  else
    npm install "${npm_flags[@]}" >&2
  fi
  entries_present || { echo "install-targets: install finished but an entry file is missing" >&2; exit 1; }
  printf '%s\n' "$want" >"$stamp"
fi

# gosdk-server and gosdk-client: nested Go modules (each its own go.mod/go.sum),
# so building them never touches the root module. gosdk-server uses
# testtools/gosdk (another nested module, by a replace directive). Same stamp
# idea: the sources + go.mod + go.sum of the module and of the modules it
# uses, and the go version.
build_go() { # build_go SOURCE-DIR NAME [USED-MODULE-DIR ...]
  local gosrc="$1" name="$2"
  shift 2
  local gobin="$prefix/bin/$name" gostamp="$prefix/bin/.$name.stamp" gowant d
  gowant="$(for d in "$gosrc" "$@"; do (cd "$d" && cat go.mod go.sum *.go); done | { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi; } | cut -d' ' -f1) $(go env GOVERSION)"
  if [ "$force" -eq 0 ] && [ -x "$gobin" ] && [ -f "$gostamp" ] && [ "$(cat "$gostamp")" = "$gowant" ]; then
    return 0 # already built
  fi
  echo "install-targets: building $gobin ..." >&2
  mkdir -p "$prefix/bin"
  rm -f "$gostamp"
  (cd "$gosrc" && GOWORK=off go build -o "$gobin" .) >&2
  printf '%s\n' "$gowant" >"$gostamp"
}
gosrc="$root/fixtures/targets/gosdk-server"
build_go "$gosrc" gosdk-server "$root/testtools/gosdk"
goclientsrc="$root/fixtures/clients/gosdk-client"
build_go "$goclientsrc" gosdk-client

# @mcp-conform/testtools (testtools/ts): the drop-in test tools for TypeScript
# SDK servers, copied (not linked: a symlink's real path would not find the
# SDK, its peer dependency) into node_modules where ts-server imports it and
# its tests find the SDK; refreshed on every run (a few kB), after npm ci,
# which would remove it.
ttsrc="$root/testtools/ts"
ttdst="$prefix/node_modules/@mcp-conform/testtools"
rm -rf "$ttdst"
mkdir -p "$ttdst/test"
cp "$ttsrc"/package.json "$ttsrc"/*.js "$ttsrc"/*.d.ts "$ttsrc"/README.md "$ttdst"/
cp "$ttsrc"/test/*.js "$ttdst"/test/
for f in "$ttdst"/*.js; do node --check "$f" >&2; done

# ts-server: plain ES modules run by node against the SDK installed above.
tssrc="$root/fixtures/targets/ts-server"
tsdst="$prefix/ts-server"
rm -rf "$tsdst"
mkdir -p "$tsdst"
cp "$tssrc"/*.mjs "$tsdst"/
node --check "$tsdst/server.mjs" >&2

# ts-client: the driver of the TypeScript SDK client, likewise.
tscsrc="$root/fixtures/clients/ts-client"
tscdst="$prefix/ts-client"
rm -rf "$tscdst"
mkdir -p "$tscdst"
cp "$tscsrc"/*.mjs "$tscdst"/
node --check "$tscdst/driver.mjs" >&2

for t in "${targets[@]}"; do
  IFS='|' read -r name pkg entry <<<"$t"
  [ "$name" = typescript-sdk ] && continue
  version="$(node -p "require(process.argv[1]).version" "$prefix/node_modules/$pkg/package.json")"
  echo "$name $version .targets/node_modules/$pkg/$entry"
done
echo "testtools-ts $(node -p "require(process.argv[1]).version" "$ttdst/package.json") .targets/node_modules/@mcp-conform/testtools/index.js"
echo "ts-server $(node -p "require(process.argv[1]).version" "$prefix/node_modules/@modelcontextprotocol/sdk/package.json") .targets/ts-server/server.mjs"
gosdk_version() { awk '{for (i = 1; i < NF; i++) if ($i == "github.com/modelcontextprotocol/go-sdk") {print $(i+1); exit}}' "$1/go.mod"; }
echo "gosdk-server $(gosdk_version "$gosrc") .targets/bin/gosdk-server"
echo "ts-client $(node -p "require(process.argv[1]).version" "$prefix/node_modules/@modelcontextprotocol/sdk/package.json") .targets/ts-client/driver.mjs"
echo "gosdk-client $(gosdk_version "$goclientsrc") .targets/bin/gosdk-client"
