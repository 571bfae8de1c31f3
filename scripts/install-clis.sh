#!/usr/bin/env bash
# Install the pinned agent CLIs from the npm registry into a project-local tools directory.
# Reused when already present (checked by version). Usage: scripts/install-clis.sh [TOOLS_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tools="${1:-${HARNESS_TOOLS_DIR:-$here/.tools}}"
CODEX_VERSION="0.169.0"
CLAUDE_VERSION="2.1.328"
mkdir -p "$tools"

install_one() {  # $1 = npm spec, $2 = subdir, $3 = version-check command, $4 = expected substring
  local spec="$1" dir="$tools/$2" check="$3" want="$4"
  if [ -x "$dir/node_modules/.bin/$check" ] && "$dir/node_modules/.bin/$check" --version 2>/dev/null | grep -q "$want"; then
    echo "install-clis: $spec already in $dir"
    return 0
  fi
  echo "install-clis: installing $spec into $dir"
  mkdir -p "$dir"
  npm install --no-audit --no-fund --loglevel=error --prefix "$dir" "$spec"
  "$dir/node_modules/.bin/$check" --version
}

install_one "@openai/codex@$CODEX_VERSION" codex codex "$CODEX_VERSION" &
p1=$!
install_one "@anthropic-ai/claude-code@$CLAUDE_VERSION" claude claude "$CLAUDE_VERSION" &
p2=$!
wait $p1
wait $p2
mkdir -p "$tools/bin"
ln -sf "$tools/codex/node_modules/.bin/codex" "$tools/bin/codex"
ln -sf "$tools/claude/node_modules/.bin/claude" "$tools/bin/claude"
echo "install-clis: ready in $tools/bin (add it to PATH)"
