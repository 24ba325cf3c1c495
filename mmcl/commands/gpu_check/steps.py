"""Steps 1 to 4 of the check (:mod:`mmcl.commands.gpu_check`): the engines on the device against the
CPU, the speed of a sweep and of one recursion step, the decisive runs, and the tests that mention
CUDA.  Each step takes the ``Check`` (:mod:`mmcl.commands.gpu_check.check`) and the dict of its results,
and returns its status and message.
"""
from __future__ import annotations

import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple

from mmcl.commands.gpu_check.check import Check, child_env, peak_memory, repo_root, reset_peak, run_child

__all__ = ["relative_difference", "cuda_test_ids"]


def engine_configs():
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


def step_engines(ck: Check, res: dict) -> Tuple[str, str]:
    import torch

    from mmcl.dynamics import MODES, simulate
    from mmcl.model.data import sample_synthetic

    configs = engine_configs()
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


def _sweep_once(ck: Check, device: str, grid: dict, seeds: int, base) -> dict:
    from mmcl.experiments.sweep import sweep

    t = time.perf_counter()
    table = sweep(grid, seeds=range(seeds), mode=["single", "multi"], engine="recursion", device=device, base=base,
                  dtype="float32", cache=False, progress=False)
    if device.startswith("cuda"):
        ck.sync()
    wall = time.perf_counter() - t
    runs = table.meta["computed"]
    return {"runs": runs, "wall_s": wall, "runs_per_min": 60 * runs / wall}


def step_speed(ck: Check, res: dict) -> Tuple[str, str]:
    import torch

    p = ck.profile
    base = None if p.sweep_base is None else engine_configs()[p.sweep_base][0]
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


def _regime_step_rows(ck: Check, n: int) -> List[dict]:
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


def _stats(t) -> dict:
    vals = [float(v) for v in t]
    return {"mean": sum(vals) / len(vals), "min": min(vals), "max": max(vals), "per_seed": vals}


def step_decisive(ck: Check, res: dict) -> Tuple[str, str]:
    from mmcl.downstream.evaluation import PROTOCOLS
    from mmcl.experiments.decisive_runs import DECISIVE_SCALING, NUS, run_decisive
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
        reset_peak(ck.device)
        t = time.perf_counter()
        run = run_decisive(n, p.decisive_seeds, scaling, device=ck.device)
        wall = time.perf_counter() - t
        last = (n, wall)
        entry = {"n": n, "seeds": p.decisive_seeds, "seconds": run.seconds, "wall_s": wall, "d": float(run.cfg.d),
                 "n_epochs": run.cfg.n_epochs, "sec33_ratio": run.sec33_ratio, "failing_conditions": run.failing,
                 "modes": {}, "window": window_json(run)}
        peak = peak_memory(ck.device)
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


def step_cuda_tests(ck: Check, res: dict) -> Tuple[str, str]:
    import importlib.util
    import xml.etree.ElementTree as ET

    root = repo_root()
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
    env = {**child_env(ck), "MMCL_CACHE_DIR": str(ck.work / "cache")}
    rc, output, timed_out = run_child(cmd, cwd=root, env=env, timeout=max(10.0, ck.remaining()))
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
