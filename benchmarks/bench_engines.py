"""Time per run of the three engines of ``mmcl.simulate`` (gd, autograd, recursion).

Settings: the Figure 1 setting (d = 2000, n = 100, m = 50, 200 epochs) and the same with
d = 20000; both modes; one run alone (unbatched) and a batch of ``--batch`` seeds (time per run
= batch time / batch size).  Reported: seconds per run (200 epochs), the ratios recursion/gd
and gd/autograd of the time per run, and the wall time of ``mmcl figure fig1 --seeds 5`` run as
a subprocess.

Every timing follows a two-epoch warm-up call.  The recursion always runs its 200 epochs, best
of ``--repeat``.  ``gd`` and ``autograd`` cost the same at every step, so where ``--epochs`` is
below 200 they run ``e`` and ``2e`` epochs and the time of 200 is extrapolated linearly, set-up
counted once (the table gives ``e`` in the ``epochs`` column); ``--quick`` uses 10 epochs and a
batch of 4.

    python benchmarks/bench_engines.py [--quick] [--device cuda] [--threads 1] --out bench_engines.json
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time

import torch

import common
import mmcl

T_FULL = 200


def _time_simulate(cfg, data, mode, engine, device, repeat):
    """Best of ``repeat`` wall times of one ``simulate`` call (after a two-epoch warm-up call, so
    lazy initialisation is not timed)."""
    mmcl.simulate(cfg.replace(n_epochs=2), data, mode, engine, record_every=2)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        mmcl.simulate(cfg, data, mode, engine, record_every=max(1, cfg.n_epochs))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def time_engine(cfg: mmcl.SyntheticConfig, mode: str, engine: str, batch: int, device: str, dtype: str,
                repeat: int = 1) -> dict:
    """Seconds per run of 200 epochs.  Where ``cfg.n_epochs < 200`` the run is timed at ``e`` and
    ``2e`` epochs and extrapolated linearly, so that the per-run set-up (e.g. autograd's
    pseudo-inverse) is counted once, not scaled with the epochs."""
    draws = [mmcl.sample_synthetic(cfg, s, dtype=dtype, device=device) for s in range(max(batch, 1))]
    data = draws[0] if batch == 0 else mmcl.SyntheticData.stack(draws)
    e = cfg.n_epochs
    wall = _time_simulate(cfg, data, mode, engine, device, repeat)
    if e < T_FULL:
        wall2 = _time_simulate(cfg.replace(n_epochs=2 * e), data, mode, engine, device, repeat)
        per_epoch = max(wall2 - wall, 0.0) / e
        setup = max(wall - per_epoch * e, 0.0)
        total = setup + per_epoch * T_FULL
    else:
        total = wall
    return {"d": cfg.d, "n": cfg.n, "mode": mode, "engine": engine, "batch": batch, "epochs": e,
            "repeat": repeat, "wall_s": wall, "s_per_run_200": total / max(batch, 1)}


def time_figure1(seeds: int = 5) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "mmcl.cli", "figure", "fig1", "--seeds", str(seeds), "--out", tmp],
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
    return {"command": f"mmcl figure fig1 --seeds {seeds}", "wall_s": wall, "returncode": proc.returncode,
            "stderr_tail": proc.stderr[-500:]}


def main(argv=None) -> int:
    ap = common.parser(__doc__, "10 epochs for gd/autograd, batch of 4, d=20000 single only")
    ap.add_argument("--batch", type=int, default=None, help="seeds per batch (default 10; 4 with --quick)")
    ap.add_argument("--epochs", type=int, default=None,
                    help="epochs timed for gd/autograd (and twice as many), extrapolated to 200 "
                         "(default 200 at d=2000 and 20 at d=20000; 10 with --quick)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many timings of the recursion (default 3)")
    ap.add_argument("--no-figure", action="store_true", help="skip timing mmcl figure fig1")
    args = common.parse(ap, argv)
    batch = args.batch or (4 if args.quick else 10)
    rows = []
    for d in (2000, 20000):
        base = mmcl.SyntheticConfig(d=d, d_tilde=d)
        slow_epochs = args.epochs or (10 if args.quick else (T_FULL if d == 2000 else 20))
        for mode in ("single", "multi") if not (args.quick and d == 20000) else ("single",):
            for engine in ("recursion", "gd", "autograd"):
                cfg = base if engine == "recursion" else base.replace(n_epochs=slow_epochs)
                for b in (0, batch):
                    print(f"d={d} {mode} {engine} batch={b} ...", file=sys.stderr, flush=True)
                    rows.append(time_engine(cfg, mode, engine, b, args.device, args.dtype,
                                            repeat=args.repeat if engine == "recursion" else 1))
    ratios = []
    for d in (2000, 20000):
        for mode in ("single", "multi"):
            for b in (0, batch):
                t = {r["engine"]: r["s_per_run_200"] for r in rows if (r["d"], r["mode"], r["batch"]) == (d, mode, b)}
                if len(t) == 3:
                    ratios.append({"d": d, "mode": mode, "batch": b, "recursion/gd": t["recursion"] / t["gd"],
                                   "gd/autograd": t["gd"] / t["autograd"]})
    fig = None if args.no_figure else time_figure1()

    print(f"\nTime per run (200 epochs), device={args.device}, dtype={args.dtype}, {common.describe_machine()}")
    print(f"{'d':>6} {'mode':<7} {'engine':<10} {'batch':>5} {'epochs':>6} {'s/run':>9}")
    for r in rows:
        print(f"{r['d']:>6} {r['mode']:<7} {r['engine']:<10} {r['batch'] or 'alone':>5} {r['epochs']:>6} "
              f"{r['s_per_run_200']:>9.3f}")
    print(f"\n{'d':>6} {'mode':<7} {'batch':>5} {'recursion/gd':>13} {'gd/autograd':>12}")
    for r in ratios:
        print(f"{r['d']:>6} {r['mode']:<7} {r['batch'] or 'alone':>5} {r['recursion/gd']:>13.3f} "
              f"{r['gd/autograd']:>12.3f}")
    if fig:
        print(f"\n{fig['command']}: {fig['wall_s']:.1f} s (exit {fig['returncode']})")
    common.write_report({"benchmark": "bench_engines", "quick": args.quick, "device": args.device,
                         "dtype": args.dtype, "rows": rows, "ratios": ratios, "figure1": fig}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
