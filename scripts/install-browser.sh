#!/usr/bin/env bash
# Install headless Chromium (Debian package "chromium") for the test that
# renders the HTML report in a real browser (cmd/mcp-conform/html_test.go).
#
#   scripts/install-browser.sh     # no-op when /usr/bin/chromium exists
#
# apt-get needs root: run as root, or have sudo. Without either the script
# says so and exits 1; the browser test then skips unless
# MCP_CONFORM_REQUIRE_TARGETS is set (scripts/test.sh sets it).
set -euo pipefail

if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: no apt-get; install Chromium yourself (Debian package 'chromium')" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-browser: need root or sudo to apt-get install chromium" >&2
    exit 1
  fi
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y --no-install-recommends chromium; then
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends chromium
fi
