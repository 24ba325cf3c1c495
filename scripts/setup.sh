#!/usr/bin/env bash
# Create .venv (if missing) and install mmcl with the book and test extras, pinned by
# constraints.txt.  Idempotent: a second run installs nothing new.  Sourced by the other scripts.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $($PY --version)"
  "$PY" -m venv .venv
fi
stamp=".venv/.mmcl-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
  echo "==> installing mmcl[test,book] into .venv (pinned by constraints.txt)"
  .venv/bin/python -m pip install --quiet --upgrade pip
  # torch first, alone, so that the pinned CPU wheel is used and nothing pulls a CUDA build
  .venv/bin/python -m pip install --quiet -c constraints.txt "torch==2.13.0"
  .venv/bin/python -m pip install --quiet -c constraints.txt -e ".[test,book]"
  .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  touch "$stamp"
fi
