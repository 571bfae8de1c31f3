#!/usr/bin/env bash
# Set up a development checkout: .venv with harness-core, the providers (Codex, Claude, the ACP agents), the web
# viewer (`harness view`: harness-view, web/), the OpenTelemetry observer (harness-otel, observers/otel; off until
# --otel), the Ray executor's plugin (without Ray itself: `pip install -e 'executors/ray[ray]'` adds it for
# `--engine ray`) and tox (with tox-uv: each test env is made by uv, ~3 s instead of pip's ~17 s);
# the pinned agent CLIs in .tools/. Idempotent: rerunning only fills in what is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source scripts/pythons.sh
source scripts/venv.sh
echo "setup: installing Python packages into .venv"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
  -e ".[test]" -e providers/codex_common -e providers/codex_appserver -e providers/codex_exec -e providers/claude \
  -e providers/acp -e executors/ray -e web -e observers/otel "tox>=4.11" "tox-uv>=1.20,<2"
echo "setup: installing the pinned agent CLIs"
bash scripts/install-clis.sh "$root/.tools"
echo "setup: done. Put the CLIs on PATH with: export PATH=\"$root/.tools/bin:\$PATH\""
