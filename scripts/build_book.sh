#!/usr/bin/env bash
# Build the book: install what is needed (scripts/setup.sh), execute every chapter that changed
# (cached in _build/.jupyter_cache: CI, on a clean clone, executes every chapter once, in the
# README's command 1, and command 2's build reuses that), and render HTML into _build/html with
# `jupyter-book build . -n -W --keep-going`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh

# MathJax 3, served by the book itself (no CDN: CI and offline readers have no network to it)
MJ=_build/static/mathjax
if [ ! -f "$MJ/tex-chtml.js" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "error: npm is needed once to fetch MathJax for the book (Debian/Ubuntu: apt-get install npm)" >&2
    exit 1
  fi
  echo "==> fetching MathJax 3 from the npm registry"
  mkdir -p _build/node
  npm install --silent --no-save --no-audit --no-fund --prefix _build/node mathjax@3 >/dev/null
  mkdir -p "$MJ"
  src=_build/node/node_modules/mathjax/es5
  cp -r "$src/tex-chtml.js" "$src/input" "$src/output" "$src/ui" "$src/a11y" "$src/adaptors" "$src/sre" "$MJ/"
fi
mkdir -p _build/extra/figures

export MMCL_FIGURE_DIR="$ROOT/_build/extra/figures"
echo "==> building the book (executes every chapter that changed; a few minutes the first time)"
.venv/bin/jupyter-book build . --builder html -n -W --keep-going
echo
echo "The book is at: file://$ROOT/_build/html/index.html"
