"""Span draws (``sample_synthetic(cfg, seed, span=True)``): what a d-free representation of the data buys.

Four measurements, each with its sampling included (a span draw's cost is the point):

1. ``engines`` -- n = 100, m = 50, 200 epochs, the ``recursion`` and ``gd`` engines, both modes:
   span draws at d = 2,000 / 10^5 / 10^8 against the explicit draw at d = 2,000.  Goal: the span
   run at d = 10^8 within 1.5x of the span run at d = 2,000, for each engine.
2. ``n1000`` -- n = 1,000, d = d~ = 10^6 (Assumption 4.1(1)'s d >= n^2), the recursion, both
   modes.  Goal: under 10 s each.
3. ``largest_n`` -- d = d~ = n^2, the recursion (single mode), sizes ``--sizes`` in turn until one
   takes over a minute: the largest n done in a minute.
4. ``seed_sweep`` -- the sweep a user runs most: 64 seeds of the Figure 1 configuration, one mode
   (single), cache off, from drawing the data to both OOD accuracies of the last step.  Explicit
   draws through ``mmcl.sweep`` (today's path), and by hand (draw, ``simulate`` batched,
   ``evaluate_all``) for explicit and span draws; span draws through ``mmcl.sweep`` as well where
   the sweep accepts ``span=True``.  Goal: >= 1,000 runs per minute with span draws.

Every configuration keeps Figure 1's per-step noise growth ``lr sigma_xi^2 d / (n m tau)`` and initial
noise ``sigma0 sigma_xi sqrt(d)`` (:func:`_at_figure1_scale`: ``lr = 0.2 n / d``, ``sigma0 = 0.01
sqrt(2000 / d)``, the Figure 1 values at d = 2,000, n = 100): with Figure 1's ``lr = 0.01`` the
noise coefficients grow by about 2,000 per step at d = 10^8 and the loss overflows within ten
steps.  The cost of a step does not depend on these values.

Each timing is the best of ``--repeat`` (the methods of a measurement taking turns, so all meet the
same slow spells of a shared machine); wall and CPU seconds are both reported, with the load
average (a loaded 2-core machine inflates wall time; CPU time is the steadier number).  Other
engine settings are the Figure 1 defaults (``M = 45``, ``tau = 0.1``, ``sigma0 = 0.01``);
``--quick`` runs 20 epochs, n = 300 instead of 1,000, two sizes of the search and 16 seeds.

    python benchmarks/bench_span.py [--quick] [--repeat 3] [--threads 1] --out bench_span.json
"""
from __future__ import annotations

import dataclasses
import sys
import time

import torch

import common
import mmcl
from mmcl.downstream.evaluation import evaluate_all


def _timed(fn, repeat: int = 1, device: str = "cpu") -> dict:
    """Best wall time of ``repeat`` calls of ``fn`` (and the CPU time of that call)."""
    best = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if best is None or wall < best["wall_s"]:
            best = {"wall_s": wall, "cpu_s": cpu}
    return best


def _at_figure1_scale(n: int, d: int, **changes) -> mmcl.SyntheticConfig:
    """The Figure 1 configuration at ``n``, ``d = d~``, with ``lr`` and ``sigma0`` rescaled so that
    ``lr sigma_xi^2 d / (n m tau)`` and ``sigma0 sigma_xi sqrt(d)`` keep their Figure 1 values."""
    return mmcl.SyntheticConfig(n=n, d=d, d_tilde=d, lr=0.2 * n / d, sigma0=0.01 * (2000 / d) ** 0.5, **changes)


def _run(cfg, span: bool, mode: str, engine: str, device: str, dtype: str, with_ood: bool = False):
    """Draw (sampling included) and simulate ``cfg.n_epochs`` epochs, keeping the last state."""
    data = mmcl.sample_synthetic(cfg, 0, span=span, dtype=dtype, device=device, with_ood=with_ood)
    return mmcl.simulate(cfg, data, mode, engine, record_every=cfg.n_epochs)


def bench_engines(epochs: int, repeat: int, device: str, dtype: str) -> list:
    cases = [("explicit", 2000)] + [("span", d) for d in (2000, 10 ** 5, 10 ** 8)]
    rows = []
    for engine in ("recursion", "gd"):
        for mode in ("single", "multi"):
            _run(_at_figure1_scale(100, 2000, n_epochs=2), False, mode, engine, device, dtype)  # warm-up
            timings = {case: [] for case in cases}
            for _ in range(repeat):  # the cases take turns
                for kind, d in cases:
                    cfg = _at_figure1_scale(100, d, n_epochs=epochs)
                    timings[(kind, d)].append(_timed(lambda: _run(cfg, kind == "span", mode, engine, device, dtype),
                                                     1, device))
            for kind, d in cases:
                best = min(timings[(kind, d)], key=lambda t: t["wall_s"])
                rows.append({"engine": engine, "mode": mode, "draw": kind, "d": d, "epochs": epochs, **best,
                             "wall_s_all": [t["wall_s"] for t in timings[(kind, d)]]})
    return rows


def bench_n1000(n: int, repeat: int, device: str, dtype: str) -> list:
    cfg = _at_figure1_scale(n, n * n)
    rows = []
    for mode in ("single", "multi"):
        t_draw = _timed(lambda: mmcl.sample_synthetic(cfg, 0, span=True, dtype=dtype, device=device), repeat, device)
        best = _timed(lambda: _run(cfg, True, mode, "recursion", device, dtype, with_ood=True), repeat, device)
        rows.append({"n": n, "d": cfg.d, "mode": mode, "engine": "recursion", **best, "draw_wall_s": t_draw["wall_s"],
                     "draw_cpu_s": t_draw["cpu_s"]})
    return rows


def bench_largest_n(sizes, limit_s: float, device: str, dtype: str) -> list:
    rows = []
    for n in sizes:
        cfg = _at_figure1_scale(n, n * n)
        print(f"  largest_n: n={n} ...", file=sys.stderr, flush=True)
        t = _timed(lambda: _run(cfg, True, "single", "recursion", device, dtype), 1, device)
        rows.append({"n": n, "d": n * n, "mode": "single", "engine": "recursion", **t, "within_limit": t["wall_s"] <= limit_s})
        if t["wall_s"] > limit_s:
            break
    return rows


def _sweep_accepts_span() -> bool:
    from mmcl.experiments.sweep import SweepConfig
    return "span" in {f.name for f in dataclasses.fields(SweepConfig)}


def _by_hand(cfg, seeds, span: bool, mode: str, device: str, dtype: str) -> None:
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, span=span, dtype=dtype, device=device)
                                     for s in seeds])
    traj = mmcl.simulate(cfg, data, mode, "recursion", record_every=cfg.n_epochs)
    evaluate_all(traj.last(), data)


def bench_seed_sweep(n_seeds: int, repeat: int, device: str, dtype: str) -> list:
    cfg = mmcl.SyntheticConfig()
    seeds = list(range(n_seeds))
    methods = [
        ("explicit, mmcl.sweep", lambda: mmcl.sweep({"tau": [cfg.tau]}, seeds=seeds, mode="single", engine="recursion",
                                                     device=device, dtype=dtype, cache=False, progress=False)),
        ("explicit, by hand", lambda: _by_hand(cfg, seeds, False, "single", device, dtype)),
        ("span, by hand", lambda: _by_hand(cfg, seeds, True, "single", device, dtype)),
    ]
    if _sweep_accepts_span():
        methods.append(("span, mmcl.sweep", lambda: mmcl.sweep({"tau": [cfg.tau]}, seeds=seeds, mode="single",
                                                                engine="recursion", device=device, dtype=dtype,
                                                                cache=False, progress=False, span=True)))
    _by_hand(cfg, seeds[:2], True, "single", device, dtype)  # warm-up
    timings = {name: [] for name, _ in methods}
    for _ in range(repeat):
        for name, fn in methods:
            timings[name].append(_timed(fn, 1, device))
    rows = []
    for name, _ in methods:
        best = min(timings[name], key=lambda t: t["wall_s"])
        rows.append({"method": name, "runs": n_seeds, **best, "runs_per_min": 60 * n_seeds / best["wall_s"],
                     "runs_per_cpu_min": 60 * n_seeds / best["cpu_s"],
                     "wall_s_all": [t["wall_s"] for t in timings[name]]})
    return rows


def main(argv=None) -> int:
    ap = common.parser(__doc__, "20 epochs, n = 300 for the n = 1,000 case, two sizes in the search, 16 seeds")
    ap.add_argument("--repeat", type=int, default=None, help="timings per case, the fastest reported (default 3)")
    ap.add_argument("--sizes", default=None, help="comma-separated n of the d = n^2 search "
                                                   "(default 1000,2000,3000,4000,5000,6000)")
    ap.add_argument("--only", default=None, help="comma-separated subset of engines,n1000,largest_n,seed_sweep")
    args = common.parse(ap, argv)
    repeat = args.repeat or (1 if args.quick else 3)
    epochs = 20 if args.quick else 200
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else ([300, 600] if args.quick else
                                                                        [1000, 2000, 3000, 4000, 5000, 6000])
    only = set(args.only.split(",")) if args.only else {"engines", "n1000", "largest_n", "seed_sweep"}
    report = {"benchmark": "bench_span", "quick": args.quick, "repeat": repeat, "device": args.device,
              "dtype": args.dtype, "load_before": common.machine()["loadavg"]}
    goals = {}
    print(f"bench_span, device={args.device}, dtype={args.dtype}, {common.describe_machine()}")

    if "engines" in only:
        print("running engines ...", file=sys.stderr, flush=True)
        rows = bench_engines(epochs, repeat, args.device, args.dtype)
        report["engines"] = rows
        print(f"\n1. n=100, m=50, {epochs} epochs, sampling included (best of {repeat})")
        print(f"{'engine':<10} {'mode':<7} {'draw':<9} {'d':>10} {'wall s':>8} {'CPU s':>7} {'vs span d=2000':>15}")
        for engine in ("recursion", "gd"):
            for mode in ("single", "multi"):
                sel = [r for r in rows if r["engine"] == engine and r["mode"] == mode]
                ref = next(r for r in sel if r["draw"] == "span" and r["d"] == 2000)
                for r in sel:
                    r["ratio_to_span_2000"] = r["wall_s"] / ref["wall_s"]
                    r["cpu_ratio_to_span_2000"] = r["cpu_s"] / ref["cpu_s"]
                    print(f"{engine:<10} {mode:<7} {r['draw']:<9} {r['d']:>10} {r['wall_s']:>8.3f} {r['cpu_s']:>7.3f} "
                          f"{r['ratio_to_span_2000']:>14.2f}x")
                far = next(r for r in sel if r["draw"] == "span" and r["d"] == 10 ** 8)
                goals[f"{engine}_{mode}_span_1e8_within_1.5x_of_2000"] = far["ratio_to_span_2000"] <= 1.5

    if "n1000" in only:
        n = 300 if args.quick else 1000
        print("running n1000 ...", file=sys.stderr, flush=True)
        rows = bench_n1000(n, repeat, args.device, args.dtype)
        report["n1000"] = rows
        print(f"\n2. n={n}, d=d~={n * n}, recursion, 200 epochs, sampling included (best of {repeat})")
        for r in rows:
            print(f"  {r['mode']:<7} wall {r['wall_s']:.2f} s, CPU {r['cpu_s']:.2f} s (the draw alone: wall "
                  f"{r['draw_wall_s']:.2f} s, CPU {r['draw_cpu_s']:.2f} s)")
            goals[f"n{n}_{r['mode']}_under_10s"] = r["wall_s"] < 10
    if "largest_n" in only:
        print("running largest_n ...", file=sys.stderr, flush=True)
        rows = bench_largest_n(sizes, 60.0, args.device, args.dtype)
        report["largest_n"] = rows
        done = [r["n"] for r in rows if r["within_limit"]]
        report["largest_n_within_a_minute"] = max(done) if done else None
        print("\n3. d = n^2, recursion, single mode, 200 epochs, sampling included")
        for r in rows:
            print(f"  n={r['n']:>5} d={r['d']:>10}: wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s")
        print(f"  largest n within a minute (of the sizes tried): {report['largest_n_within_a_minute']}")
    if "seed_sweep" in only:
        n_seeds = 16 if args.quick else 64
        print("running seed_sweep ...", file=sys.stderr, flush=True)
        rows = bench_seed_sweep(n_seeds, repeat, args.device, args.dtype)
        report["seed_sweep"] = rows
        print(f"\n4. {n_seeds} seeds of the Figure 1 configuration, single mode, cache off (best of {repeat})")
        ref = next(r for r in rows if r["method"] == "explicit, mmcl.sweep")
        for r in rows:
            print(f"  {r['method']:<22} wall {r['wall_s']:6.2f} s  {r['runs_per_min']:7.0f} runs/min  "
                  f"CPU {r['cpu_s']:6.2f} s  {r['runs_per_cpu_min']:7.0f} runs/CPU-min  "
                  f"{ref['wall_s'] / r['wall_s']:5.1f}x the sweep's rate")
        best_span = max((r for r in rows if r["method"].startswith("span")), key=lambda r: r["runs_per_min"])
        goals["seed_sweep_span_ge_1000_runs_per_min"] = best_span["runs_per_min"] >= 1000
    report["goals"] = goals
    print("goals:", ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in goals.items()))
    common.write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
