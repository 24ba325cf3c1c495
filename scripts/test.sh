#!/usr/bin/env bash
# Run every test: the library's tests, the book build (every chapter executed, -n -W), nbval on
# the executed chapters under a second CPU code path, and the real-browser check of the rendered
# pages.  Installs what it needs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
PY=.venv/bin/python
export MMCL_CACHE_DIR="$ROOT/_build/cache"
# every pytest run's output also goes to this log, from which the last line totals the three runs
LOG="$ROOT/_build/test-summary.log"
mkdir -p _build && : > "$LOG"

echo "==> 1/4 library tests"
start=$SECONDS
$PY -m pytest tests --ignore=tests/book -q 2>&1 | tee -a "$LOG"
echo "    ($((SECONDS - start)) s)"

echo "==> 2/4 building the book (executes every chapter that changed since the last build)"
start=$SECONDS
bash scripts/build_book.sh
echo "    ($((SECONDS - start)) s)"

echo "==> 3/4 nbval: every chapter re-executed under a second CPU code path; every claim must hold again,"
echo "    and cells marked NBVAL_CHECK_OUTPUT must print what the build printed"
start=$SECONDS
NB=_build/nbval
rm -rf "$NB" && mkdir -p "$NB"
# the executed copies written by the build (under _build/, converted from the MyST chapters by jupytext)
find _build/jupyter_execute -name '*.ipynb' -exec cp {} "$NB"/ \;
n=$(ls "$NB"/*.ipynb | wc -l)
echo "    $n notebooks"
# A trained network's digits move with the vector instructions its kernels use (mmcl/codepath.py):
# the book's claims must hold on every machine, so nbval runs them under another code path than
# the build's (AVX2 where the CPU has AVX-512, no vector extensions where it has AVX2).  The cache
# keys entries by code path, so nothing computed by the build is reused here.
native=$(.venv/bin/mmcl codepath)
if alt=$(.venv/bin/mmcl codepath --alternative 2>/dev/null); then
  eval "$alt"
  echo "    code path: build $native, nbval $(.venv/bin/mmcl codepath)"
else
  echo "    warning: the CPU's code path ($native) has no other below it: nbval runs under the same one"
fi
MMCL_FIGURE_DIR="$ROOT/$NB/figures" $PY -m pytest --nbval-lax -p no:cacheprovider -q "$NB" 2>&1 | tee -a "$LOG"
unset ATEN_CPU_CAPABILITY ONEDNN_MAX_CPU_ISA MKL_ENABLE_INSTRUCTIONS
echo "    ($((SECONDS - start)) s)"

echo "==> 4/4 real-browser check of the rendered book (headless Chromium)"
start=$SECONDS
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ]; then
    echo "    installing Debian's chromium and chromium-driver"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "error: the browser test needs chromium and chromedriver (sudo apt-get install chromium chromium-driver)" >&2
    exit 1
  fi
fi
MMCL_REQUIRE_BOOK=1 $PY -m pytest tests/book -q -p no:cacheprovider 2>&1 | tee -a "$LOG"
echo "    ($((SECONDS - start)) s)"

echo "==> all four steps in $SECONDS s"
# the three pytest runs together (library, nbval, browser), as the closing line
$PY - "$LOG" <<'PYEOF'
import re, sys
passed = failed = 0
for line in open(sys.argv[1], errors="replace"):
    if re.search(r" in [0-9.]+s", line):  # pytest's summary line, e.g. "N passed, M warnings in 159.37s"
        passed += sum(int(n) for n in re.findall(r"(\d+) passed", line))
        failed += sum(int(n) for n in re.findall(r"(\d+) (?:failed|errors?)\b", line))
print(f"tests: {passed} passed, {failed} failed")
sys.exit(1 if failed or not passed else 0)
PYEOF
