#!/usr/bin/env bash
# One prepared check of a lent GPU machine: the book's simulations on CUDA against the CPU, their
# speed, the decisive runs, the tests that need CUDA and as many full-size chapters as fit, each
# step timed and recorded (mmcl/commands/gpu_check/ says what each step measures).
#
#   bash scripts/gpu_check.sh OUTDIR [--quick | --tiny] [--budget S] [--commit SHA] [--device cuda|cpu] ...
#
# Writes OUTDIR/gpu_record.json and OUTDIR/gpu_check.log (nothing else goes into OUTDIR); any option
# after OUTDIR goes to `mmcl gpu-check`.  About 8 minutes on one H200 (--budget 480 s), about 2 with
# --quick, seconds on a CPU with --tiny.  benchmarks/records/README.md says where a record goes.
#
# Nothing is installed or downloaded (a lent machine has no network, and its PyTorch must stay as it
# is): mmcl runs from this checkout through PYTHONPATH, on the packages of the interpreter $PYTHON
# (default python3, which on the GPU machine is the one that holds PyTorch).  Exit status: 0 when
# every step passed or was left out for the budget, 1 when a step failed, 2 for bad arguments.
set -uo pipefail

if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  echo "usage: bash scripts/gpu_check.sh OUTDIR [--quick | --tiny] [mmcl gpu-check options]" >&2
  exit 2
fi
OUT=$1
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
mkdir -p "$OUT" || { echo "gpu_check.sh: OUTDIR $OUT cannot be created" >&2; exit 2; }
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/gpu_check.log"
: > "$LOG" || { echo "gpu_check.sh: cannot write $LOG" >&2; exit 2; }
say() { echo "$*" | tee -a "$LOG"; }

say "gpu_check.sh $(date -u +%Y-%m-%dT%H:%M:%SZ): checkout $ROOT, python $(command -v "$PY" || echo "$PY: not found")"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 MPLBACKEND=Agg
cd "$ROOT"

# mmcl's own dependencies must be the interpreter's; pytest is optional (the tests step says so)
"$PY" - "$ROOT" <<'EOF' 2>&1 | tee -a "$LOG"
import importlib.util, os, sys
root = os.path.realpath(sys.argv[1])
missing = [m for m in ("torch", "numpy", "matplotlib", "tqdm") if importlib.util.find_spec(m) is None]
if sys.version_info < (3, 11) and importlib.util.find_spec("tomli") is None:
    missing.append("tomli")
print(f"python {sys.version.split()[0]} at {sys.executable}")
for m in ("torch", "numpy", "matplotlib", "tqdm", "pytest", "hypothesis", "scipy", "sympy", "IPython"):
    spec = importlib.util.find_spec(m)
    version = ""
    if spec is not None:
        try:
            from importlib.metadata import version as v
            version = v({"IPython": "ipython"}.get(m, m))
        except Exception:
            version = "present"
    print(f"  {m:<11} {version or 'missing'}")
if missing:
    sys.exit(f"missing dependencies of mmcl: {', '.join(missing)} (nothing is installed here: carry them as wheels)")
import torch
print(f"  CUDA available: {torch.cuda.is_available()}" + (f", {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""))
import mmcl
where = os.path.realpath(os.path.dirname(mmcl.__file__))
if not where.startswith(root + os.sep):
    sys.exit(f"mmcl is imported from {where}, not from the checkout {root}")
print(f"  mmcl from {where}")
EOF
status=$?
if [ $status -ne 0 ]; then
  say "gpu_check.sh: the interpreter cannot run mmcl from this checkout (see above); no record written"
  exit 1
fi

"$PY" -m mmcl.cli gpu-check --out "$OUT" "$@"
status=$?
say "gpu_check.sh: done, exit status $status; record: $OUT/gpu_record.json"
exit $status
