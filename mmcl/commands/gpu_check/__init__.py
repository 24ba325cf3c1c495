"""The command line ``mmcl gpu-check --out DIR [--quick | --tiny] [--device cuda|cpu] [--budget S]``:
one prepared check of a lent GPU machine, which runs the book's simulations on CUDA and records what
it measured (``scripts/gpu_check.sh`` calls it; ``benchmarks/records/README.md`` says where a record
goes).

A lent machine is there for minutes (``benchmarks/records/README.md``), starts bare and is given
back after the call, so the check is one command that installs nothing (the package runs from the
checkout, on the machine's own PyTorch), times every step, records a step that fails with its
message and goes on to the next, and starts no new step once ``--budget`` seconds are spent.  The
steps, the most valuable first:

1. ``engines`` -- the three engines of ``mmcl.simulate`` (``gd``, ``autograd``, ``recursion``)
   on the device against the CPU at float64, float32 against float64 on the device, and each engine
   against the recursion on the device, on a few small configurations of both modes: the largest
   relative difference ``max|a - b| / max|b|`` of the loss, ``gamma`` and ``rho`` (and their
   tilded twins in multi mode);
2. ``speed`` -- the batched sweep of ``benchmarks/bench_sweep.py`` (reduced) on the device against
   the CPU of the same machine (runs per minute and their ratio), and one recursion step against one
   ``(m x n) @ (n x n)`` product on the device, the ratio ``benchmarks/bench_regime_step.py`` reports
   on the CPU;
3. ``decisive`` -- :func:`~mmcl.experiments.decisive_runs.run_decisive` at ``n = 9224`` and
   ``10000`` (``--quick``: ``2000``): per mode, test signal and protocol the OOD errors (mean, min,
   max, per seed), ``c_ell_T1``, the times, and :func:`mmcl.experiments.window.window_json` (the
   thresholds and the windows);
4. ``cuda_tests`` -- the library's tests whose code mentions CUDA, under pytest when it is
   importable (``tests/test_cuda.py`` holds those that run only on a GPU);
5. ``chapters`` -- as many chapters as the budget leaves time for, executed at their full size
   (``MMCL_BOOK_FULL=1``), each in its own process stopped when the budget is spent: its time, the
   cells it ran and every claim's verdict (the chapter's claims register).  ``--tiny`` draws the
   chapters' figures at the ``tiny`` size instead (no claims).

The record, ``DIR/gpu_record.json`` (rewritten after every step, so a run cut short leaves what it
measured), holds the machine (GPU name, memory and driver, torch, CPUs), the CPU code path, the git
commit (``--commit``, else ``git``, else ``"unknown"``) and the code's hash, the start time, and per
step its status (``ok``, ``failed``, ``skipped``; ``running`` where the run was cut off during it),
seconds, message and results; ``DIR/gpu_check.log`` is what it printed.  ``--steps`` and
``--chapters`` choose what runs, ``--seeds`` the decisive runs' seeds.  ``--quick`` (about 2
minutes on an H200) runs smaller decisive runs; ``--tiny`` runs every step at the smallest sizes, on
the CPU in well under a minute, which is how the test suite runs the whole check.
:mod:`mmcl.booksupport.records` reads a record back.

The check lives in four modules: this package (the command, the profiles and :func:`run_check`),
``check`` (the record, the machine, child processes), ``steps`` (steps 1 to 4) and ``chapters``
(step 5); every name of their ``__all__`` is importable from here.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import os
import re
import time
import traceback
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, Tuple

from mmcl.commands.gpu_check.chapters import GPU_FIRST, chapter_cells, chapter_order, step_chapters
from mmcl.commands.gpu_check.check import (LOG_NAME, RECORD_NAME, SCHEMA, Check, Profile, code_info, machine_info,
                                           peak_memory, release_memory, reset_peak)
from mmcl.commands.gpu_check.steps import (cuda_test_ids, relative_difference, step_cuda_tests, step_decisive,
                                           step_engines, step_speed)

__all__ = ["PROFILES", "Profile", "STEPS", "RECORD_NAME", "LOG_NAME", "SCHEMA", "add_parser", "run", "run_check",
           "machine_info", "cuda_test_ids", "chapter_cells", "relative_difference"]


#: The steps, in the order they run (most valuable first).
STEPS = ("engines", "speed", "decisive", "cuda_tests", "chapters")


PROFILES: Dict[str, Profile] = {
    "full": Profile("full", 480, ("small", "figure1", "regime"), 64, 4, 2, None, (2000, 10000), 10, 3,
                    (9224, 10000), 5, None, None, "notebook", "full"),
    "quick": Profile("quick", 120, ("small", "figure1"), 16, 2, 1, None, (2000,), 10, 2,
                     (2000,), 2, None, None, "notebook", "full"),
    "tiny": Profile("tiny", 60, ("tiny",), 2, 1, 1, "tiny", (100,), 5, 2,
                    (100,), 2, 20, ("setting",), "figures", "tiny", threads=1),
}


def add_parser(sub) -> None:
    """Register ``mmcl gpu-check`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("gpu-check", help="one prepared check of a GPU machine (DIR/gpu_record.json)",
                       description="Run the book's simulations on CUDA against the CPU, time them, run the "
                                   "decisive runs, the tests that need CUDA and as many full-size chapters as "
                                   "the budget allows; write DIR/gpu_record.json and DIR/gpu_check.log.")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="about 2 minutes on an H200: n = 2000, 2 seeds")
    size.add_argument("--tiny", action="store_true", help="the smallest sizes: every step in seconds on a CPU")
    p.add_argument("--device", default=None,
                   help="cuda or cpu (default: MMCL_DEVICE, else cuda where available, else cpu)")
    p.add_argument("--budget", type=float, default=None,
                   help="seconds after which no new step starts (default 480; --quick 120; --tiny 60)")
    p.add_argument("--seeds", type=int, default=None, help="seeds of each decisive run (default 5; --quick 2)")
    p.add_argument("--chapters", default=None,
                   help="comma-separated chapter stems for the chapters step, or 'none' (default: all, "
                        "those meant for a GPU first)")
    p.add_argument("--steps", default=None,
                   help=f"comma-separated steps to run (default: all, in this order: {', '.join(STEPS)})")
    p.add_argument("--commit", default=None, help="the git commit to record (default: git's, else 'unknown')")
    p.set_defaults(func=run)


def run(args) -> int:
    """``mmcl gpu-check``: check the options, run :func:`run_check`; 1 when a step failed."""
    from mmcl._utils import check_int, resolve_device, writable_dir

    profile = PROFILES["tiny" if args.tiny else "quick" if args.quick else "full"]
    out = writable_dir("--out", args.out)
    device = args.device or os.environ.get("MMCL_DEVICE") or None
    if device is None:
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        device = str(resolve_device(device))
    except ValueError as exc:
        raise ValueError(f"--device: {exc}") from None
    budget = profile.budget if args.budget is None else args.budget
    if isinstance(budget, bool) or not (isinstance(budget, (int, float)) and math.isfinite(budget) and budget > 0):
        raise ValueError(f"--budget must be a positive number of seconds, got {args.budget!r}")
    if args.seeds is not None:
        check_int("--seeds", args.seeds)
        profile = dataclasses.replace(profile, decisive_seeds=args.seeds)
    if args.chapters is not None:
        profile = dataclasses.replace(profile, chapters=_parse_chapters(args.chapters))
    if args.commit is not None and not re.fullmatch(r"[0-9a-fA-F]{4,40}(\+dirty)?|unknown", args.commit):
        raise ValueError(f"--commit must be a git commit (4 to 40 hex digits), got {args.commit!r}")
    steps = STEPS
    if args.steps is not None:
        steps = tuple(t.strip() for t in args.steps.split(",") if t.strip())
        bad = [t for t in steps if t not in STEPS]
        if not steps or bad:
            raise ValueError(f"--steps: {', '.join(map(repr, bad)) or repr(args.steps)} is not a step; valid: "
                             f"{', '.join(STEPS)}")
    options = {k: v for k, v in vars(args).items() if k not in ("func", "command")}
    record = run_check(out, profile, device=device, budget=float(budget), commit=args.commit, steps=steps,
                       options=options)
    failed = [name for name, s in record["steps"].items() if s["status"] == "failed"]
    return 1 if failed else 0


def _parse_chapters(text: str) -> Tuple[str, ...]:
    from mmcl.figures.registry import chapters

    CHAPTERS = chapters()
    if text.strip().lower() == "none":
        return ()
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [c for c in names if c not in CHAPTERS]
    if not names or bad:
        raise ValueError(f"--chapters: {', '.join(map(repr, bad)) or repr(text)} is not a chapter; valid: "
                         f"{', '.join(CHAPTERS)}, or 'none'")
    return names


def run_check(out, profile: Profile, *, device: str = "cpu", budget: Optional[float] = None,
              commit: Optional[str] = None, steps: Sequence[str] = STEPS, options: Optional[dict] = None) -> dict:
    """Run the ``steps`` (default all, always in the order of :data:`STEPS`; the others are recorded
    as skipped) of ``profile`` on ``device`` within ``budget`` seconds (default the profile's),
    writing ``out/gpu_record.json`` after each and ``out/gpu_check.log``; returns the record.
    ``options``: the command line's options, recorded as given."""
    import shutil

    if not isinstance(profile, Profile):
        raise ValueError(f"profile must be a Profile (e.g. PROFILES['tiny']), got {type(profile).__name__}")
    steps = tuple(steps)
    bad = [s for s in steps if s not in STEPS]
    if bad:
        raise ValueError(f"steps: {', '.join(map(repr, bad))} is not a step; valid: {', '.join(STEPS)}")
    out = Path(out)
    budget = profile.budget if budget is None else budget
    import torch

    threads = torch.get_num_threads()
    if profile.threads is not None:
        torch.set_num_threads(profile.threads)
    record = {"kind": "gpu-check", "schema": SCHEMA, "profile": profile.name, "device": device,
              "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "finished": None,
              "complete": False, "budget_s": float(budget), "wall_s": 0.0,
              "options": {k: v for k, v in (options or {}).items() if isinstance(v, (str, int, float, bool, type(None)))},
              **code_info(commit), "machine": machine_info(), "steps": {}}
    ck = Check(out, profile, device, budget, record)
    ck.log(f"mmcl gpu-check: profile {profile.name}, device {device}, budget {budget:.0f} s, "
           f"commit {record['commit']}, mmcl at {record['package_path']}")
    gpu = record["machine"]["gpu"]
    ck.log("machine: " + (f"{gpu['name']} ({gpu['memory_gib']:.1f} GiB, driver {gpu['driver']})" if gpu else "no GPU")
           + f", torch {record['machine']['torch']}, {record['machine']['cpus']} CPUs")
    ck.save()
    funcs: Dict[str, Callable] = {"engines": step_engines, "speed": step_speed, "decisive": step_decisive,
                                  "cuda_tests": step_cuda_tests, "chapters": step_chapters}
    try:
        for name in STEPS:
            entry = {"status": "running", "seconds": 0.0, "message": "", "results": {}}
            record["steps"][name] = entry
            if name not in steps:
                entry.update(status="skipped", message="not asked for (--steps)")
                continue
            if ck.remaining() <= 0:
                entry.update(status="skipped", message=f"the budget of {budget:.0f} s was spent before it started")
                ck.log(f"step {name}: skipped (budget spent)")
                ck.save()
                continue
            ck.log(f"step {name}: started ({ck.remaining():.0f} s of the budget left)")
            release_memory(device)  # what the last step left cached is free for this one (and its child processes)
            t = time.perf_counter()
            reset_peak(device)
            try:
                status, message = funcs[name](ck, entry["results"])
            except Exception as exc:  # a failing step is recorded and the next one starts
                status, message = "failed", f"{type(exc).__name__}: {exc}"
                ck.log_block(f"{name}: traceback", traceback.format_exc())
            entry.update(status=status, message=message, seconds=time.perf_counter() - t)
            peak = peak_memory(device)
            if peak is not None:
                entry["peak_gpu_memory_gib"] = peak
            ck.log(f"step {name}: {status} in {entry['seconds']:.1f} s{': ' + message if message else ''}")
            ck.save()
        record["complete"] = True
    finally:
        record["finished"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        ck.save()
        shutil.rmtree(ck.work, ignore_errors=True)
        torch.set_num_threads(threads)
    try:
        from mmcl.booksupport.records import format_record, record_name

        ck.log("summary:\n" + format_record(record))
        ck.log(f"wrote {ck.record_path}; to keep it: copy it to benchmarks/records/{record_name(record)}")
    except Exception as exc:  # the summary is a courtesy: the record is written
        ck.log(f"(no summary: {type(exc).__name__}: {exc})")
    return record
