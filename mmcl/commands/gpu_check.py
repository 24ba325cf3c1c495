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
3. ``decisive`` -- :func:`mmcl.experiments.theorems_regime.run_decisive` at ``n = 9224`` and
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
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["PROFILES", "Profile", "STEPS", "RECORD_NAME", "LOG_NAME", "SCHEMA", "add_parser", "run", "run_check",
           "machine_info", "cuda_test_ids", "chapter_cells", "relative_difference"]

#: The file names written into ``--out``.
RECORD_NAME = "gpu_record.json"
LOG_NAME = "gpu_check.log"
#: The record's format version (``record["schema"]``); raised when a field changes meaning.
SCHEMA = 1
#: The steps, in the order they run (most valuable first).
STEPS = ("engines", "speed", "decisive", "cuda_tests", "chapters")

#: The chapters the ``chapters`` step tries first, those meant for a GPU (the decisive runs, the
#: window, the theorems' regime, the phase diagrams, ColoredMNIST); then the rest in the book's order
#: (:func:`chapter_order`, read from ``_toc.yml``).
GPU_FIRST = ("decisive_runs", "window", "theorems_regime", "phase_diagrams", "coloredmnist")


def chapter_order() -> Tuple[str, ...]:
    """:data:`GPU_FIRST`, then every other chapter of ``_toc.yml`` in the book's order."""
    from mmcl.figures.registry import chapters

    book = chapters()
    return tuple(c for c in GPU_FIRST if c in book) + tuple(c for c in book if c not in GPU_FIRST)


@dataclass(frozen=True)
class Profile:
    """What one size of the check runs: ``budget`` (seconds, the default of ``--budget``), the
    ``engine_configs`` of step 1 (keys of ``_engine_configs()``), step 2's sweep (``sweep_runs``
    runs per mode over ``sweep_seeds`` seeds, ``sweep_repeat`` timings each, on ``sweep_base``: None
    for the Figure 1 setting or the name of an engine configuration) and recursion steps
    (``step_sizes``, ``step_steps`` steps per timed run, ``step_turns`` turns), step 3's decisive runs
    (``decisive`` sizes, ``decisive_seeds`` seeds, ``decisive_epochs``: None for the scaling's 200),
    step 5's ``chapters``, ``chapter_method`` (``"notebook"``: executed; ``"figures"``: their
    figures drawn) and ``chapter_size``; ``threads``: torch's CPU threads during the check (None:
    torch's choice, every core of a lent machine; ``tiny`` takes 1, as the chapters do on a CPU,
    since on a shared 2-core machine one thread runs its small tensors many times faster than two)."""

    name: str
    budget: float
    engine_configs: Tuple[str, ...]
    sweep_runs: int
    sweep_seeds: int
    sweep_repeat: int
    sweep_base: Optional[str]
    step_sizes: Tuple[int, ...]
    step_steps: int
    step_turns: int
    decisive: Tuple[int, ...]
    decisive_seeds: int
    decisive_epochs: Optional[int]
    chapters: Optional[Tuple[str, ...]]  # None: every chapter, GPU_FIRST first (chapter_order)
    chapter_method: str
    chapter_size: str
    threads: Optional[int] = None


PROFILES: Dict[str, Profile] = {
    "full": Profile("full", 480, ("small", "figure1", "regime"), 64, 4, 2, None, (2000, 10000), 10, 3,
                    (9224, 10000), 5, None, None, "notebook", "full"),
    "quick": Profile("quick", 120, ("small", "figure1"), 16, 2, 1, None, (2000,), 10, 2,
                     (2000,), 2, None, None, "notebook", "full"),
    "tiny": Profile("tiny", 60, ("tiny",), 2, 1, 1, "tiny", (100,), 5, 2,
                    (100,), 2, 20, ("setting",), "figures", "tiny", threads=1),
}


def _engine_configs():
    """The configurations of step 1, by name: ``small`` (the tests' small configuration), ``figure1``
    (the paper's Figure 1 setting), ``regime`` (the theorems' regime at ``n = 100``, span draws, 50
    steps) and ``tiny`` (seconds on a CPU).  Each is ``(config, span)``."""
    from mmcl.experiments.theorems_regime import regime_config
    from mmcl.model.config import SyntheticConfig

    return {
        "small": (SyntheticConfig(d=300, d_tilde=250, n=24, m=10, M=10, n_epochs=200, n_test=60, n_heldout=200), False),
        "figure1": (SyntheticConfig(), False),
        "regime": (regime_config(100).replace(n_epochs=50), True),
        "tiny": (SyntheticConfig(d=60, d_tilde=50, n=8, m=4, M=4, n_epochs=10, n_test=20, n_heldout=40), False),
    }


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# the check
# --------------------------------------------------------------------------------------------
class _Check:
    """The state of one check: its clock and budget, the record (written after every step and
    sub-step) and the log."""

    def __init__(self, out: Path, profile: Profile, device: str, budget: float, record: dict):
        self.out, self.profile, self.device, self.budget, self.record = out, profile, device, budget, record
        self.t0 = time.perf_counter()
        self.log_path = out / LOG_NAME
        self.record_path = out / RECORD_NAME
        self.work = Path(_mkdtemp())

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float:
        return self.budget - self.elapsed()

    def log(self, msg: str) -> None:
        line = f"[{self.elapsed():7.1f} s] {msg}"
        print(line, flush=True)
        with open(self.log_path, "a") as f:
            f.write(line + "\n")

    def log_block(self, title: str, text: str, lines: int = 40) -> None:
        tail = text.splitlines()[-lines:]
        with open(self.log_path, "a") as f:
            f.write(f"---- {title} (last {len(tail)} lines) ----\n" + "\n".join(tail) + "\n---- end ----\n")

    def save(self) -> None:
        self.record["wall_s"] = self.elapsed()
        tmp = self.record_path.with_name(self.record_path.name + ".tmp")
        tmp.write_text(json.dumps(_clean(self.record), indent=1, allow_nan=False))
        os.replace(tmp, self.record_path)

    def sync(self) -> None:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()


def _mkdtemp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="mmcl-gpu-check-")


def _clean(x):
    """``x`` with non-finite floats as None and tuples as lists (strict JSON)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


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
              **_code_info(commit), "machine": machine_info(), "steps": {}}
    ck = _Check(out, profile, device, budget, record)
    ck.log(f"mmcl gpu-check: profile {profile.name}, device {device}, budget {budget:.0f} s, "
           f"commit {record['commit']}, mmcl at {record['package_path']}")
    gpu = record["machine"]["gpu"]
    ck.log("machine: " + (f"{gpu['name']} ({gpu['memory_gib']:.1f} GiB, driver {gpu['driver']})" if gpu else "no GPU")
           + f", torch {record['machine']['torch']}, {record['machine']['cpus']} CPUs")
    ck.save()
    funcs: Dict[str, Callable] = {"engines": _step_engines, "speed": _step_speed, "decisive": _step_decisive,
                                  "cuda_tests": _step_cuda_tests, "chapters": _step_chapters}
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
            _release(device)  # what the last step left cached is free for this one (and its child processes)
            t = time.perf_counter()
            _reset_peak(device)
            try:
                status, message = funcs[name](ck, entry["results"])
            except Exception as exc:  # a failing step is recorded and the next one starts
                status, message = "failed", f"{type(exc).__name__}: {exc}"
                ck.log_block(f"{name}: traceback", traceback.format_exc())
            entry.update(status=status, message=message, seconds=time.perf_counter() - t)
            peak = _peak(device)
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


def _release(device: str) -> None:
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.reset_peak_memory_stats()


def _peak(device: str) -> Optional[float]:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.max_memory_allocated() / 2**30
    return None


def _code_info(commit: Optional[str]) -> dict:
    """The package's folder, its hash (:func:`mmcl.cache.code_version`) and the git commit."""
    import mmcl
    from mmcl.cache import code_version

    pkg = Path(mmcl.__file__).resolve().parent
    dirty = None
    if commit is None:
        commit = "unknown"
        try:
            r = subprocess.run(["git", "-C", str(pkg.parent), "rev-parse", "HEAD"], capture_output=True, text=True,
                               timeout=30)
            if r.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", r.stdout.strip()):
                commit = r.stdout.strip()
                s = subprocess.run(["git", "-C", str(pkg.parent), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=30)
                dirty = bool(s.stdout.strip()) if s.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            pass
    return {"commit": commit, "dirty": dirty, "code_version": code_version(), "package_path": str(pkg)}


def machine_info() -> dict:
    """torch and CUDA versions, Python, platform, CPUs, load average, torch threads, the CPU code path
    (:func:`mmcl.codepath.current`) and ``gpu`` (None without CUDA; else name, memory, driver,
    compute capability, multiprocessors and the number of devices)."""
    import platform

    import torch

    from mmcl.codepath import current

    info = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda, "python": platform.python_version(),
            "platform": platform.platform(), "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None, "code_path": current(),
            "gpu": None}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        info["gpu"] = {"name": p.name, "memory_gib": p.total_memory / 2**30, "driver": _driver_version(),
                       "capability": f"{p.major}.{p.minor}", "multiprocessors": p.multi_processor_count,
                       "count": torch.cuda.device_count()}
    return info


def _driver_version() -> str:
    """The NVIDIA driver's version from ``nvidia-smi`` (else NVML), or ``"unknown"``."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        import pynvml

        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:
        return "unknown"


# --------------------------------------------------------------------------------------------
# step 1: the engines, device against CPU
# --------------------------------------------------------------------------------------------
def relative_difference(a, b) -> float:
    """``max|a - b| / max|b|`` over every element (0 when both are zero), in float64 on the CPU."""
    import torch

    a, b = a.detach().to("cpu", torch.float64), b.detach().to("cpu", torch.float64)
    scale = float(b.abs().max()) if b.numel() else 0.0
    diff = float((a - b).abs().max()) if b.numel() else 0.0
    if scale == 0.0:
        return 0.0 if diff == 0.0 else math.inf
    return diff / scale


def _quantities(traj) -> Dict[str, object]:
    out = {"loss": traj.loss, "gamma": traj.gamma, "rho": traj.rho}
    if traj.gamma_tilde is not None:
        out.update(gamma_tilde=traj.gamma_tilde, rho_tilde=traj.rho_tilde)
    return out


def _compare(a, b) -> Dict[str, float]:
    qa, qb = _quantities(a), _quantities(b)
    return {k: relative_difference(qa[k], qb[k]) for k in qb}


def _step_engines(ck: _Check, res: dict) -> Tuple[str, str]:
    import torch

    from mmcl.dynamics import MODES, simulate
    from mmcl.model.data import sample_synthetic

    configs = _engine_configs()
    res["configs"], res["rows"] = {}, []
    worst = {"device_vs_cpu_float64": 0.0, "float32_vs_float64": 0.0, "engine_vs_recursion_float64": 0.0}
    f64, f32 = torch.float64, torch.float32
    for name in ck.profile.engine_configs:
        if ck.remaining() <= 0:
            return "ok", f"stopped after {len(res['configs'])} configuration(s): budget spent"
        cfg, span = configs[name]
        res["configs"][name] = {"d": float(cfg.d), "n": cfg.n, "m": cfg.m, "M": cfg.M, "n_epochs": cfg.n_epochs,
                                "span": span}
        data = sample_synthetic(cfg, seed=0, dtype=f64, span=span)
        for mode in MODES:
            rec_dev = None
            for engine in ("recursion", "gd", "autograd"):
                times = {}

                def timed(key, **kw):
                    t = time.perf_counter()
                    tr = simulate(cfg, data, mode, engine, **kw)
                    ck.sync()
                    times[key] = time.perf_counter() - t
                    return tr

                cpu = timed("cpu_float64", device="cpu", dtype=f64)
                dev = timed("device_float64", device=ck.device, dtype=f64)
                d32 = timed("device_float32", device=ck.device, dtype=f32)
                row = {"config": name, "mode": mode, "engine": engine, "seconds": times,
                       "device_vs_cpu_float64": _compare(dev, cpu), "float32_vs_float64": _compare(d32, dev)}
                if engine == "recursion":
                    rec_dev = dev
                else:
                    row["engine_vs_recursion_float64"] = _compare(dev, rec_dev)
                for key in worst:
                    if key in row:
                        worst[key] = max(worst[key], max(row[key].values()))
                res["rows"].append(row)
                ck.log(f"  engines {name}/{mode}/{engine}: device vs CPU {max(row['device_vs_cpu_float64'].values()):.2e}, "
                       f"float32 vs float64 {max(row['float32_vs_float64'].values()):.2e}")
        ck.save()
    res["max"] = worst
    return "ok", (f"largest relative differences: device vs CPU (float64) {worst['device_vs_cpu_float64']:.1e}, "
                  f"float32 vs float64 {worst['float32_vs_float64']:.1e}, engines vs recursion "
                  f"{worst['engine_vs_recursion_float64']:.1e}")


# --------------------------------------------------------------------------------------------
# step 2: speed
# --------------------------------------------------------------------------------------------
def _sweep_once(ck: _Check, device: str, grid: dict, seeds: int, base) -> dict:
    from mmcl.experiments.sweep import sweep

    t = time.perf_counter()
    table = sweep(grid, seeds=range(seeds), mode=["single", "multi"], engine="recursion", device=device, base=base,
                  dtype="float32", cache=False, progress=False)
    if device.startswith("cuda"):
        ck.sync()
    wall = time.perf_counter() - t
    runs = table.meta["computed"]
    return {"runs": runs, "wall_s": wall, "runs_per_min": 60 * runs / wall}


def _step_speed(ck: _Check, res: dict) -> Tuple[str, str]:
    import torch

    p = ck.profile
    base = None if p.sweep_base is None else _engine_configs()[p.sweep_base][0]
    from mmcl.experiments.sweep import speed_grid

    grid = speed_grid(p.sweep_runs, p.sweep_seeds)
    # warm-up: the device's first call loads its kernels
    _sweep_once(ck, ck.device, {"tau": [0.1]}, 1, base)
    timings = {"device": [], "cpu": []}
    for _ in range(p.sweep_repeat):  # the two take turns; the fastest of each is kept
        for where, dev in (("device", ck.device), ("cpu", "cpu")):
            timings[where].append(_sweep_once(ck, dev, grid, p.sweep_seeds, base))
    best = {k: min(v, key=lambda r: r["wall_s"]) for k, v in timings.items()}
    res["sweep"] = {"grid": grid, "seeds": p.sweep_seeds, "modes": ["single", "multi"], "dtype": "float32",
                    "base": p.sweep_base or "figure1", "cpu_threads": torch.get_num_threads(),
                    "device": {**best["device"], "wall_s_all": [r["wall_s"] for r in timings["device"]]},
                    "cpu": {**best["cpu"], "wall_s_all": [r["wall_s"] for r in timings["cpu"]]},
                    "speedup": best["device"]["runs_per_min"] / best["cpu"]["runs_per_min"]}
    ck.log(f"  sweep: {best['device']['runs_per_min']:.0f} runs/min on {ck.device} against "
           f"{best['cpu']['runs_per_min']:.0f} on the CPU ({res['sweep']['speedup']:.1f}x)")
    ck.save()
    res["regime_step"] = []
    for n in p.step_sizes:
        if ck.remaining() <= 0:
            return "ok", f"sweep timed; recursion steps stopped before n = {n}: budget spent"
        res["regime_step"].extend(_regime_step_rows(ck, n))
        ck.save()
    worst = max((r["ratio_step"] for r in res["regime_step"]), default=float("nan"))
    return "ok", (f"sweep {res['sweep']['speedup']:.1f}x the CPU; one recursion step costs at most {worst:.1f} "
                  "(m x n) @ (n x n) products")


def _regime_step_rows(ck: _Check, n: int) -> List[dict]:
    """One recursion step at ``n`` against one ``(m x n) @ (n x n)`` product on the device, as
    ``benchmarks/bench_regime_step.py`` times them: ``step`` is ``(run of T steps - run of 1 step) /
    (T - 1)``, ``run`` a whole run of ``T`` steps over ``T``; medians over alternating turns."""
    import statistics

    import torch

    import mmcl
    from mmcl.experiments.theorems_regime import regime_config

    p = ck.profile
    T = p.step_steps
    cfg = regime_config(n).replace(n_epochs=T)
    draw = mmcl.sample_synthetic(cfg, seed=0, span=True, dtype=torch.float64, with_ood=False)
    rows = []
    for dtype in (torch.float64, torch.float32):
        data = draw.to(device=ck.device, dtype=dtype)
        A = torch.randn(cfg.m, n, dtype=dtype, device=ck.device)
        G = torch.randn(n, n, dtype=dtype, device=ck.device)
        for mode in ("single", "multi"):
            def timed(fn):
                ck.sync()
                t = time.perf_counter()
                fn()
                ck.sync()
                return time.perf_counter() - t

            def run_steps(steps):
                mmcl.simulate(cfg.replace(n_epochs=steps), data, mode, "recursion", record_every=max(1, steps))

            def product():
                for _ in range(T):
                    A @ G

            run_steps(1)  # warm-up
            product()
            full, one, prod = [], [], []
            for _ in range(p.step_turns):
                full.append(timed(lambda: run_steps(T)))
                one.append(timed(lambda: run_steps(1)))
                prod.append(timed(product))
            pm = statistics.median(prod) / T
            step = (statistics.median(full) - statistics.median(one)) / (T - 1)
            run_ = statistics.median(full) / T
            row = {"n": n, "mode": mode, "dtype": str(dtype).replace("torch.", ""), "steps": T, "m": cfg.m,
                   "M": cfg.M, "product_ms": 1e3 * pm, "step_ms": 1e3 * step, "run_ms": 1e3 * run_,
                   "ratio_step": step / pm, "ratio_run": run_ / pm}
            rows.append(row)
            ck.log(f"  recursion step n = {n} {mode} {row['dtype']}: {row['step_ms']:.2f} ms, "
                   f"{row['ratio_step']:.1f} products (product {row['product_ms']:.3f} ms)")
        del data, A, G
    return rows


# --------------------------------------------------------------------------------------------
# step 3: the decisive runs
# --------------------------------------------------------------------------------------------
def _stats(t) -> dict:
    vals = [float(v) for v in t]
    return {"mean": sum(vals) / len(vals), "min": min(vals), "max": max(vals), "per_seed": vals}


def _step_decisive(ck: _Check, res: dict) -> Tuple[str, str]:
    from mmcl.downstream.evaluation import PROTOCOLS
    from mmcl.experiments.theorems_regime import DECISIVE_SCALING, NUS, run_decisive
    from mmcl.experiments.window import window_json

    p = ck.profile
    scaling = DECISIVE_SCALING if p.decisive_epochs is None else dataclasses.replace(DECISIVE_SCALING,
                                                                                     n_epochs=p.decisive_epochs)
    res["runs"] = []
    last = None  # (n, seconds) of the last run: the next one starts only if it should end within the budget
    for n in p.decisive:
        if ck.remaining() <= 0:
            return "ok", f"{len(res['runs'])} run(s); n = {n} not started: budget spent"
        if last is not None and last[1] * (n / last[0]) ** 2 > ck.remaining():
            return "ok", (f"{len(res['runs'])} run(s); n = {n} not started: about {last[1] * (n / last[0]) ** 2:.0f} s "
                          f"expected, {ck.remaining():.0f} s of the budget left")
        ck.log(f"  decisive run n = {n}, {p.decisive_seeds} seeds on {ck.device} ...")
        _reset_peak(ck.device)
        t = time.perf_counter()
        run = run_decisive(n, p.decisive_seeds, scaling, device=ck.device)
        wall = time.perf_counter() - t
        last = (n, wall)
        entry = {"n": n, "seeds": p.decisive_seeds, "seconds": run.seconds, "wall_s": wall, "d": float(run.cfg.d),
                 "n_epochs": run.cfg.n_epochs, "sec33_ratio": run.sec33_ratio, "failing_conditions": run.failing,
                 "modes": {}, "window": window_json(run)}
        peak = _peak(ck.device)
        if peak is not None:
            entry["peak_gpu_memory_gib"] = peak
        for mode, r in run.modes.items():
            entry["modes"][mode] = {
                "failing_conditions": run.failing_for(mode),
                "loss": _stats(r.loss),
                "ood_error": {nu: {pr: _stats(r.error[nu, pr]) for pr in PROTOCOLS} for nu in NUS},
                "c_ell_T1": [float(v) for v in r.c_ell_T1] if r.c_ell_T1 is not None else None,
                "t1_measured": [float(v) for v in r.t1], "t1_formula": float(r.t1_formula),
            }
            errs = ", ".join(f"{nu}/{pr} {entry['modes'][mode]['ood_error'][nu][pr]['mean']:.3f}"
                             for nu in NUS for pr in PROTOCOLS)
            ck.log(f"  decisive n = {n} {mode}: OOD error {errs}")
        res["runs"].append(entry)
        ck.log(f"  decisive run n = {n}: {wall:.1f} s")
        ck.save()
    return "ok", f"{len(res['runs'])} run(s): " + ", ".join(f"n = {r['n']} in {r['wall_s']:.0f} s" for r in res["runs"])


# --------------------------------------------------------------------------------------------
# step 4: the tests that mention CUDA
# --------------------------------------------------------------------------------------------
#: Test files the ``cuda_tests`` step never selects: this check's own test runs the check itself.
_NOT_SELECTED = ("test_gpu_check.py",)


def cuda_test_ids(tests_dir) -> List[str]:
    """The pytest node ids (``tests/test_x.py::test_y``, relative to the folder above ``tests_dir``)
    of every test function or method whose source mentions ``cuda`` (any case), and of every test of
    a module whose module-level code does; the check's own test is left out."""
    import ast

    tests_dir = Path(tests_dir)
    ids = []
    for path in sorted(tests_dir.glob("test_*.py")):
        if path.name in _NOT_SELECTED:
            continue
        src = path.read_text()
        if "cuda" not in src.lower():
            continue
        tree = ast.parse(src)
        rel = f"{tests_dir.name}/{path.name}"
        module_level = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Import,
                                                                    ast.ImportFrom))]
        if any("cuda" in (ast.get_source_segment(src, n) or "").lower() for n in module_level):
            ids.append(rel)
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                if "cuda" in (ast.get_source_segment(src, node) or "").lower():
                    ids.append(f"{rel}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                whole = "cuda" in "".join(ast.get_source_segment(src, d) or "" for d in node.decorator_list).lower()
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                        if whole or "cuda" in (ast.get_source_segment(src, item) or "").lower():
                            ids.append(f"{rel}::{node.name}::{item.name}")
    return ids


def _step_cuda_tests(ck: _Check, res: dict) -> Tuple[str, str]:
    import importlib.util
    import xml.etree.ElementTree as ET

    root = _repo_root()
    tests = root / "tests"
    if not tests.is_dir():
        return "skipped", f"skipped: no tests folder at {tests}"
    if importlib.util.find_spec("pytest") is None:
        return "skipped", "skipped: no pytest"
    ids = cuda_test_ids(tests)
    res["selected"] = ids
    if not ids:
        return "skipped", "skipped: no test mentions cuda"
    junit = ck.work / "cuda_tests.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *ids]
    env = {**_child_env(ck), "MMCL_CACHE_DIR": str(ck.work / "cache")}
    rc, output, timed_out = _run_child(cmd, cwd=root, env=env, timeout=max(10.0, ck.remaining()))
    ck.log_block("pytest", output)
    res["returncode"] = rc
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures = []
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            kinds = [c.tag for c in case]
            name = f"{case.get('classname')}::{case.get('name')}"
            if "failure" in kinds or "error" in kinds:
                counts["failed" if "failure" in kinds else "errors"] += 1
                bad = next(c for c in case if c.tag in ("failure", "error"))
                failures.append({"test": name, "message": (bad.get("message") or "")[:500]})
            elif "skipped" in kinds:
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    res.update(counts)
    res["failures"] = failures
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "nothing ran"
    if timed_out:
        return "failed", f"stopped at the budget: {summary}"
    if rc not in (0, 5) or counts["failed"] or counts["errors"]:
        return "failed", f"pytest exit {rc}: {summary}"
    return "ok", summary


def _repo_root() -> Path:
    """The checkout holding the package that runs (its ``tests/`` and ``book/``)."""
    import mmcl

    return Path(mmcl.__file__).resolve().parent.parent


def _child_env(ck: _Check) -> dict:
    """The environment of a child process: this package first on ``PYTHONPATH``, no display, and the
    profile's torch threads."""
    old = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": str(_repo_root()) + (os.pathsep + old if old else ""), "MPLBACKEND": "Agg",
           "PYTHONUNBUFFERED": "1"}
    if ck.profile.threads is not None:
        env["OMP_NUM_THREADS"] = str(ck.profile.threads)
    return env


def _run_child(cmd, *, cwd, env, timeout: float, output: Optional[Path] = None) -> Tuple[Optional[int], str, bool]:
    """Run ``cmd`` in its own process group, killed with its group after ``timeout`` seconds:
    ``(returncode or None, its output, timed out)``."""
    import tempfile

    with tempfile.TemporaryFile("w+") if output is None else open(output, "w+") as f:
        proc = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
        timed_out = False
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            rc = None
        f.seek(0)
        return rc, f.read(), timed_out


# --------------------------------------------------------------------------------------------
# step 5: the chapters
# --------------------------------------------------------------------------------------------
def _step_chapters(ck: _Check, res: dict) -> Tuple[str, str]:
    p = ck.profile
    res.update(method=p.chapter_method, size=p.chapter_size, chapters={})
    todo = chapter_order() if p.chapters is None else p.chapters
    if not todo:
        return "skipped", "skipped: no chapter asked for (--chapters none)"
    run_one = _chapter_notebook if p.chapter_method == "notebook" else _chapter_figures
    for ch in todo:
        if ck.remaining() <= 0:
            res["chapters"][ch] = {"status": "skipped", "seconds": 0.0, "message": "budget spent before it started"}
            continue
        ck.log(f"  chapter {ch} ({p.chapter_method}, size {p.chapter_size}) ...")
        t = time.perf_counter()
        try:
            entry = run_one(ck, ch)
        except Exception as exc:
            entry = {"status": "failed", "message": f"{type(exc).__name__}: {exc}"}
            ck.log_block(f"chapter {ch}: traceback", traceback.format_exc())
        entry["seconds"] = time.perf_counter() - t
        res["chapters"][ch] = entry
        counts = entry.get("verdicts")
        ck.log(f"  chapter {ch}: {entry['status']} in {entry['seconds']:.1f} s"
               + (f", claims {counts}" if counts else "") + (f": {entry['message']}" if entry.get("message") else ""))
        ck.save()
    ran = [c for c, e in res["chapters"].items() if e["status"] != "skipped"]
    bad = [c for c, e in res["chapters"].items() if e["status"] in ("failed", "timeout")]
    msg = f"{len(ran)} of {len(todo)} chapter(s) ran" + (f"; not finished: {', '.join(bad)}" if bad else "")
    # a chapter stopped by the budget is not a failure of the code; one that raised is
    failed = [c for c in bad if res["chapters"][c]["status"] == "failed"]
    return ("failed" if failed else "ok"), msg


def _chapter_figures(ck: _Check, chapter: str) -> dict:
    """Draw every registered figure of ``chapter`` at the profile's size (the experiment's cached
    runs and the chapter's drawing functions), in this process."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmcl.figures import registry

    names = [s.name for s in registry.figures().values() if s.chapter == chapter]
    old = os.environ.get("MMCL_CACHE_DIR")
    os.environ["MMCL_CACHE_DIR"] = str(ck.work / "cache")
    drawn = []
    try:
        for name in names:
            if ck.remaining() <= 0:
                return {"status": "timeout", "figures": drawn, "message": "budget spent"}
            fig = registry.make(name, ck.profile.chapter_size, ck.device)
            plt.close(fig)
            drawn.append(name)
    finally:
        if old is None:
            os.environ.pop("MMCL_CACHE_DIR", None)
        else:
            os.environ["MMCL_CACHE_DIR"] = old
    return {"status": "ok", "figures": drawn, "message": ""}


def _chapter_notebook(ck: _Check, chapter: str) -> dict:
    """Execute ``chapter`` in a child process (:func:`_chapter_child`) at the profile's size, killed
    when the budget is spent; its cells, time and claims."""
    path = _repo_root() / "book" / f"{chapter}.md"
    if not path.exists():
        return {"status": "failed", "message": f"no chapter file {path}"}
    result = ck.work / f"chapter-{chapter}.json"
    figs = ck.work / "figures" / chapter
    env = {**_child_env(ck), "MMCL_DEVICE": ck.device, "MMCL_FIGURE_DIR": str(figs),
           "MMCL_BOOK_FULL": "1" if ck.profile.chapter_size == "full" else "0", "MMCL_CACHE_DIR": str(ck.work / "cache")}
    cmd = [sys.executable, "-m", "mmcl.commands.gpu_check", "_chapter", str(path), str(result)]
    rc, output, timed_out = _run_child(cmd, cwd=path.parent, env=env, timeout=max(1.0, ck.remaining()))
    ck.log_block(f"chapter {chapter}", output, lines=20)
    entry = json.loads(result.read_text()) if result.exists() else {}
    entry.setdefault("message", "")
    if timed_out:
        entry["status"] = "timeout"
        entry["message"] = (f"stopped when the budget was spent, in cell {entry.get('cell_running', '?')} of "
                            f"{entry.get('cells', '?')} ({entry.get('cells_run', 0)} finished)")
    elif rc != 0 and entry.get("status") != "failed":
        entry["status"] = "failed"
        entry["message"] = entry["message"] or f"exit status {rc}: " + " | ".join(output.strip().splitlines()[-3:])
    return entry


def chapter_cells(path) -> List[str]:
    """The code of every ``{code-cell}`` of a MyST chapter, in order, without its option lines
    (``:tags: ...`` or a ``---`` block)."""
    lines = Path(path).read_text().splitlines()
    cells, k = [], 0
    while k < len(lines):
        if lines[k].strip().startswith("```{code-cell}"):
            k += 1
            body = []
            while k < len(lines) and lines[k].strip() != "```":
                body.append(lines[k])
                k += 1
            if body and body[0].strip() == "---":  # a YAML block of options
                end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), 0)
                body = body[end + 1:]
            while body and re.match(r"^:[\w-]+:", body[0]):
                body = body[1:]
            cells.append("\n".join(body) + "\n")
        k += 1
    return cells


def _ensure_ipython_display() -> None:
    """Chapters import ``IPython.display``; where IPython is missing (the GPU image has none), a
    stand-in whose ``display`` does nothing."""
    try:
        import IPython.display  # noqa: F401
        return
    except ImportError:
        pass
    import types

    class _Shown:
        def __init__(self, data=None, *args, **kwargs):
            self.data = data

    ipy, disp = types.ModuleType("IPython"), types.ModuleType("IPython.display")
    disp.display = lambda *objs, **kwargs: None
    for name in ("HTML", "Markdown", "Latex", "Math", "SVG", "Image", "JSON"):
        setattr(disp, name, type(name, (_Shown,), {}))
    ipy.display = disp
    ipy.get_ipython = lambda: None
    sys.modules["IPython"], sys.modules["IPython.display"] = ipy, disp


def _claims_of(ns: dict) -> list:
    """The claims registers a chapter's namespace holds (``env.claims`` and any other), once each."""
    from mmcl.booksupport import BookEnv
    from mmcl.booksupport.claims import Claims

    found = {}
    for v in list(ns.values()):
        reg = v.claims if isinstance(v, BookEnv) else v if isinstance(v, Claims) else None
        if reg is not None:
            found[id(reg)] = reg
    return [row for reg in found.values() for row in reg.rows]


def _chapter_child(md_path: str, result_path: str) -> int:
    """Execute a chapter's cells in one namespace, as a kernel would, writing ``result_path`` (JSON:
    status, cells, cells run, each cell's seconds, the claims and the figures) after every cell."""
    t0 = time.perf_counter()
    path = Path(md_path)
    cells = chapter_cells(path)
    _ensure_ipython_display()
    import matplotlib

    matplotlib.use("Agg")
    state = {"chapter": path.stem, "status": "running", "cells": len(cells), "cells_run": 0, "cell_seconds": [],
             "message": "", "claims": [], "verdicts": {}, "figures": []}
    ns = {"__name__": "__main__"}

    def write():
        rows = _claims_of(ns)
        state["claims"] = [{"claim": r.claim[:300], "paper": r.paper, "verdict": r.verdict, "kind": r.kind,
                            "observed": r.observed, "bound": r.bound, "margin": r.margin} for r in rows]
        verdicts: Dict[str, int] = {}
        for r in rows:
            verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
        state["verdicts"] = verdicts
        figs = Path(os.environ.get("MMCL_FIGURE_DIR") or ".")
        state["figures"] = sorted(p.stem for p in figs.glob("*.png")) if figs.is_dir() else []
        state["seconds"] = time.perf_counter() - t0
        tmp = Path(result_path + ".tmp")
        tmp.write_text(json.dumps(_clean(state)))
        os.replace(tmp, result_path)

    write()  # the number of cells, before the first one runs
    for k, src in enumerate(cells):
        state["cell_running"] = k + 1
        write()
        t = time.perf_counter()
        try:
            exec(compile(src, f"<{path.stem} cell {k + 1}>", "exec"), ns)
        except BaseException as exc:  # a failed claim (ClaimFailed) or any error stops the chapter
            state["status"] = "failed"
            state["message"] = f"cell {k + 1}: {type(exc).__name__}: {str(exc)[:1000]}"
            traceback.print_exc()
            state["cell_seconds"].append(time.perf_counter() - t)
            write()
            return 1
        finally:
            if "matplotlib.pyplot" in sys.modules:
                sys.modules["matplotlib.pyplot"].close("all")
        state["cell_seconds"].append(time.perf_counter() - t)
        state["cells_run"] = k + 1
        print(f"cell {k + 1}/{len(cells)}: {state['cell_seconds'][-1]:.1f} s", flush=True)
        write()
    state["status"] = "ok"
    state.pop("cell_running", None)
    write()
    return 0


if __name__ == "__main__":  # the child process of the chapters step: python -m mmcl.commands.gpu_check _chapter MD JSON
    if len(sys.argv) != 4 or sys.argv[1] != "_chapter":
        sys.exit("usage: python -m mmcl.commands.gpu_check _chapter CHAPTER.md RESULT.json")
    sys.exit(_chapter_child(sys.argv[2], sys.argv[3]))
