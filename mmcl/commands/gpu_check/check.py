"""The state of one check and what it stands on: the record and the log it writes (``Check``,
the file names and the format's version), the machine and the code it records, the device's memory
between steps, and the child processes that run tests and chapters.  Part of :mod:`mmcl.commands.gpu_check`.
"""
from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Tuple

__all__ = ["RECORD_NAME", "LOG_NAME", "SCHEMA", "Profile", "machine_info"]


#: The file names written into ``--out``.
RECORD_NAME = "gpu_record.json"
LOG_NAME = "gpu_check.log"
#: The record's format version (``record["schema"]``); raised when a field changes meaning.
SCHEMA = 1


@dataclass(frozen=True)
class Profile:
    """What one size of the check runs: ``budget`` (seconds, the default of ``--budget``), the
    ``engine_configs`` of step 1 (keys of ``engine_configs()``), step 2's sweep (``sweep_runs``
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


class Check:
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
        tmp.write_text(json.dumps(clean_json(self.record), indent=1, allow_nan=False))
        os.replace(tmp, self.record_path)

    def sync(self) -> None:
        if self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()


def _mkdtemp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="mmcl-gpu-check-")


def clean_json(x):
    """``x`` with non-finite floats as None and tuples as lists (strict JSON)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): clean_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [clean_json(v) for v in x]
    return x


def release_memory(device: str) -> None:
    import gc

    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def reset_peak(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.reset_peak_memory_stats()


def peak_memory(device: str) -> Optional[float]:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.max_memory_allocated() / 2**30
    return None


def code_info(commit: Optional[str]) -> dict:
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


def repo_root() -> Path:
    """The checkout holding the package that runs (its ``tests/`` and ``book/``)."""
    import mmcl

    return Path(mmcl.__file__).resolve().parent.parent


def child_env(ck: Check) -> dict:
    """The environment of a child process: this package first on ``PYTHONPATH``, no display, and the
    profile's torch threads."""
    old = os.environ.get("PYTHONPATH", "")
    env = {**os.environ, "PYTHONPATH": str(repo_root()) + (os.pathsep + old if old else ""), "MPLBACKEND": "Agg",
           "PYTHONUNBUFFERED": "1"}
    if ck.profile.threads is not None:
        env["OMP_NUM_THREADS"] = str(ck.profile.threads)
    return env


def run_child(cmd, *, cwd, env, timeout: float, output: Optional[Path] = None) -> Tuple[Optional[int], str, bool]:
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
