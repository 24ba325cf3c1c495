"""Records of what lent machines measured, kept under ``benchmarks/records/`` (its README says what
goes there): one JSON file per run of ``scripts/gpu_check.sh`` on a GPU machine, named
``gpu-<date>-<commit>.json`` (:func:`record_name`), written by :mod:`mmcl.commands.gpu_check`.

* :func:`records_dir` -- the folder; :func:`record_paths` -- its records of one kind, oldest first;
* :func:`latest_record` -- the newest record as a dict, or None when there is none yet;
* :func:`format_record` -- a short text: the machine, the commit, the decisive runs' OOD errors with
  their spread over seeds, the speed-ups, and each step's status; for None, a sentence saying that
  no record exists yet and how one is made;
* :func:`summary` -- :func:`format_record` of :func:`latest_record`.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List, Optional

from mmcl._utils import repo_root

__all__ = ["KINDS", "records_dir", "record_paths", "load_record", "latest_record", "record_name", "format_record",
           "summary", "NO_RECORD"]

#: The kinds of record, by file-name prefix: ``"gpu"`` (``scripts/gpu_check.sh`` on a lent GPU machine).
KINDS = ("gpu",)
#: What :func:`format_record` says when there is no record.
NO_RECORD = ("No GPU record yet: benchmarks/records/ holds no gpu-*.json, so nothing in the book has been measured "
             "on a GPU. A lent GPU machine makes one with `bash scripts/gpu_check.sh OUTDIR` "
             "(benchmarks/records/README.md).")
_REQUIRED = ("kind", "started", "machine", "steps")


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is unknown; valid: {', '.join(map(repr, KINDS))}")
    return kind


def records_dir(folder=None) -> Path:
    """``folder`` if given, else ``benchmarks/records`` of the checkout (``mmcl._utils.repo_root``)."""
    return Path(folder) if folder is not None else repo_root() / "benchmarks" / "records"


def record_paths(kind: str = "gpu", folder=None) -> List[Path]:
    """The records of ``kind`` in ``folder`` (``<kind>-*.json``), by name: oldest first, since names
    start with the date."""
    _check_kind(kind)
    d = records_dir(folder)
    return sorted(d.glob(f"{kind}-*.json")) if d.is_dir() else []


def load_record(path) -> dict:
    """The record in ``path``; a ValueError naming the file when it is not JSON or lacks a required
    key (``kind``, ``started``, ``machine``, ``steps``)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable JSON record: {exc}") from None
    if not isinstance(rec, dict):
        raise ValueError(f"{path} holds a {type(rec).__name__}, not a record (a JSON object)")
    missing = [k for k in _REQUIRED if k not in rec]
    if missing:
        raise ValueError(f"{path} is not a record: it lacks {', '.join(missing)}")
    return rec


def latest_record(kind: str = "gpu", folder=None) -> Optional[dict]:
    """The newest record of ``kind`` (by its start time, then its name), or None when there is none."""
    recs = [load_record(p) for p in record_paths(kind, folder)]
    if not recs:
        return None
    return max(enumerate(recs), key=lambda kr: (str(kr[1].get("started", "")), kr[0]))[1]


def record_name(record: dict) -> str:
    """``gpu-<date>-<commit>.json``: the name a record is kept under (the start date, the commit's
    first 12 hex digits or ``unknown``)."""
    date = str(record.get("started", ""))[:10] or "undated"
    m = re.fullmatch(r"([0-9a-fA-F]{4,40})(\+dirty)?", str(record.get("commit") or ""))
    commit = m.group(1)[:12] if m else "unknown"
    return f"gpu-{date}-{commit}.json"


def _g(x, fmt: str = ".3f") -> str:
    return "?" if not isinstance(x, (int, float)) or isinstance(x, bool) else format(x, fmt)


def _spread(s) -> str:
    """``mean [min, max]`` of a statistics dict."""
    if not isinstance(s, dict):
        return "?"
    return f"{_g(s.get('mean'))} [{_g(s.get('min'))}, {_g(s.get('max'))}]"


def format_record(record: Optional[dict]) -> str:
    """A short text of ``record`` (a dict of :mod:`mmcl.commands.gpu_check`'s format): the machine and
    the commit, each step's status and time, the engines' largest differences, the decisive runs' OOD
    errors (mean [min, max] over seeds, per mode, test signal and protocol), the speed-ups, and the
    chapters that ran.  Fields a record lacks print as ``?``.  ``None``: :data:`NO_RECORD`."""
    if record is None:
        return NO_RECORD
    if not isinstance(record, dict):
        raise ValueError(f"record must be a dict (a loaded record) or None, got {type(record).__name__}")
    m = record.get("machine") or {}
    gpu = m.get("gpu")
    where = (f"{gpu.get('name', '?')} ({_g(gpu.get('memory_gib'), '.0f')} GiB, driver {gpu.get('driver', '?')})"
             if isinstance(gpu, dict) else "no GPU")
    commit = str(record.get("commit") or "unknown")[:12] + (" with local changes" if record.get("dirty") else "")
    lines = [f"{record_name(record)[:-5]}: profile {record.get('profile', '?')} on {record.get('device', '?')}, "
             f"started {record.get('started', '?')}, {'complete' if record.get('complete') else 'NOT complete'}, "
             f"{_g(record.get('wall_s'), '.0f')} s of a {_g(record.get('budget_s'), '.0f')} s budget",
             f"machine: {where}, torch {m.get('torch', '?')}, {m.get('cpus', '?')} CPUs (code path "
             f"{m.get('code_path', '?')}); commit {commit}, code {record.get('code_version', '?')}"]
    steps = record.get("steps") or {}
    lines.append("steps: " + ", ".join(f"{k} {s.get('status', '?')} {_g(s.get('seconds'), '.0f')} s"
                                        for k, s in steps.items()))
    eng = (steps.get("engines") or {}).get("results") or {}
    if isinstance(eng.get("max"), dict):
        mx = eng["max"]
        lines.append(f"engines, largest relative difference: device vs CPU at float64 "
                     f"{_g(mx.get('device_vs_cpu_float64'), '.1e')}, float32 vs float64 {_g(mx.get('float32_vs_float64'), '.1e')}, "
                     f"gd/autograd vs recursion {_g(mx.get('engine_vs_recursion_float64'), '.1e')}")
    runs = ((steps.get("decisive") or {}).get("results") or {}).get("runs") or []
    if runs:
        lines.append("decisive runs, OOD error mean [min, max] over seeds:")
    for run in runs:
        win = (run.get("window") or {}).get("windows") or {}
        ws = ", ".join(f"{p} {'empty' if w is None else f'[{_g(w[0])}, {_g(w[1])}]'}" for p, w in win.items())
        lines.append(f"  n = {run.get('n', '?')}, {run.get('seeds', '?')} seeds, {_g(run.get('wall_s'), '.0f')} s"
                     + (f"; window (measured): {ws}" if ws else ""))
        for mode, r in (run.get("modes") or {}).items():
            err = r.get("ood_error") or {}
            cells = [f"{nu}/{p} {_spread(s)}" for nu, d in err.items() for p, s in d.items()]
            lines.append(f"    {mode:>6}: " + "; ".join(cells))
    sp = (steps.get("speed") or {}).get("results") or {}
    sw = sp.get("sweep")
    if isinstance(sw, dict):
        lines.append(f"speed: batched sweep {_g(sw.get('speedup'), '.1f')}x the CPU "
                     f"({_g((sw.get('device') or {}).get('runs_per_min'), '.0f')} against "
                     f"{_g((sw.get('cpu') or {}).get('runs_per_min'), '.0f')} runs/min)")
    rows = sp.get("regime_step") or []
    if rows:
        parts = [f"n = {r.get('n')} {r.get('mode')} {r.get('dtype')} {_g(r.get('ratio_step'), '.1f')}" for r in rows]
        lines.append("one recursion step in (m x n) @ (n x n) products: " + ", ".join(parts))
    ch = ((steps.get("chapters") or {}).get("results") or {}).get("chapters") or {}
    if ch:
        done = [f"{c} {e.get('status')} {_g(e.get('seconds'), '.0f')} s"
                + (f" ({', '.join(f'{v} {k}' for k, v in e['verdicts'].items())})" if e.get("verdicts") else "")
                for c, e in ch.items() if e.get("status") != "skipped"]
        left = [c for c, e in ch.items() if e.get("status") == "skipped"]
        lines.append("chapters: " + ("; ".join(done) or "none ran") + (f"; not started: {len(left)}" if left else ""))
    return "\n".join(lines)


def summary(kind: str = "gpu", folder=None) -> str:
    """:func:`format_record` of :func:`latest_record` (:data:`NO_RECORD` when there is none)."""
    return format_record(latest_record(kind, folder))
