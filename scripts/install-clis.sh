#!/usr/bin/env bash
# Install the pinned agent CLIs from the npm registry into a project-local tools directory, and link each
# executable into TOOLS_DIR/bin. Reused when already present (checked by the installed package.json's version).
# Usage: scripts/install-clis.sh [TOOLS_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tools="${1:-${HARNESS_TOOLS_DIR:-$here/.tools}}"
mkdir -p "$tools/bin"

# subdir | npm package | pinned version | executables linked into bin/ (server-everything: the MCP server the tool
# tests give every agent, a real one nobody here wrote)
PINNED="
codex|@openai/codex|0.169.0|codex
claude|@anthropic-ai/claude-code|2.1.328|claude
gemini|@google/gemini-cli|0.61.0|gemini
codex-acp|@zed-industries/codex-acp|0.16.0|codex-acp
claude-acp|@zed-industries/claude-agent-acp|0.23.1|claude-agent-acp
qwen|@qwen-code/qwen-code|0.24.4|qwen
mcp-everything|@modelcontextprotocol/server-everything|2026.8.31|mcp-server-everything
"

installed_version() {  # $1 = dir, $2 = package: the version in its package.json, or nothing
  local manifest="$1/node_modules/$2/package.json"
  [ -f "$manifest" ] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$manifest" | head -n 1
}

install_one() {  # $1 = subdir, $2 = package, $3 = version
  local dir="$tools/$1"
  if [ "$(installed_version "$dir" "$2")" = "$3" ]; then
    echo "install-clis: $2@$3 already in $dir"
    return 0
  fi
  echo "install-clis: installing $2@$3 into $dir"
  mkdir -p "$dir"
  npm install --no-audit --no-fund --no-update-notifier --loglevel=error --prefix "$dir" "$2@$3"
  [ "$(installed_version "$dir" "$2")" = "$3" ] || { echo "install-clis: $2@$3 did not install" >&2; return 1; }
}

pids=()
while IFS='|' read -r sub pkg version bins; do
  [ -n "$sub" ] || continue
  install_one "$sub" "$pkg" "$version" &
  pids+=($!)
done <<< "$PINNED"
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[ "$status" = 0 ] || { echo "install-clis: some CLIs failed to install (see above)" >&2; exit 1; }

while IFS='|' read -r sub pkg version bins; do
  [ -n "$sub" ] || continue
  for bin in $bins; do ln -sf "$tools/$sub/node_modules/.bin/$bin" "$tools/bin/$bin"; done
done <<< "$PINNED"
# codex-acp sandboxes commands with bubblewrap: without a system bwrap, the one @openai/codex ships (found by the
# acp provider beside `codex`; linked here too so a plain PATH has it)
bwrap="$(ls "$tools"/codex/node_modules/@openai/codex-linux-*/vendor/*/codex-resources/bwrap 2>/dev/null | head -n 1 || true)"
if ! command -v bwrap >/dev/null 2>&1 && [ -n "$bwrap" ]; then ln -sf "$bwrap" "$tools/bin/bwrap"; fi
for cli in codex claude gemini; do  # the three that print their version at once: each must answer
  version="$("$tools/bin/$cli" --version)"
  echo "install-clis: $cli --version: $version"
done
echo "install-clis: ready in $tools/bin (add it to PATH)"
