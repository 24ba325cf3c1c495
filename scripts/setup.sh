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
# Graphviz's dot lays out the Blueprint page's graph (mmcl.figures.blueprint_graph); the book build
# and the tests that draw the graph need it
if ! command -v dot >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] || [ "${CI:-}" = "true" ]; then
    echo "==> installing Debian's graphviz (its dot lays out the Blueprint)"
    SUDO=""; [ "$(id -u)" = "0" ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq graphviz >/dev/null
  else
    echo "error: the book needs Graphviz's dot, from the package graphviz (sudo apt-get install graphviz)" >&2
    exit 1
  fi
fi
