#!/usr/bin/env bash
# Build the release binaries of mcp-conform into dist/ (git-ignored):
# linux, darwin and windows on amd64 and arm64, each stamped with the
# version, commit and commit date (mcp-conform version prints them), plus
# SHA256SUMS.
#
#   scripts/release.sh            # version from `git describe --tags --always --dirty`
#   scripts/release.sh v0.2.0     # this version (tag the commit first for a real release)
#
# Outputs dist/mcp-conform_<version>_<os>_<arch>[.exe] and dist/SHA256SUMS.
# Pure Go (CGO_ENABLED=0), -trimpath, so the binaries are the same on any
# builder for the same commit and toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

version="${1:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
date="$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "release: warning: the working tree has uncommitted changes; $commit does not describe these binaries" >&2
  case "$version" in *-dirty) ;; *) version="$version-dirty" ;; esac
fi
case "$version" in
  *[!A-Za-z0-9._+-]*) echo "release: version '$version' has characters a file name should not" >&2; exit 2 ;;
esac

ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date"
rm -rf dist
mkdir -p dist
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
  os=${platform%/*} arch=${platform#*/}
  out="dist/mcp-conform_${version}_${os}_${arch}"
  [ "$os" = windows ] && out="$out.exe"
  echo "release: $out"
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out" ./cmd/mcp-conform
done
(
  cd dist
  if command -v sha256sum >/dev/null 2>&1; then sha256sum mcp-conform_* > SHA256SUMS
  else shasum -a 256 mcp-conform_* > SHA256SUMS; fi
)
echo "release: dist/SHA256SUMS"
cat dist/SHA256SUMS
