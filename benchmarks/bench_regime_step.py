"""Cost of one recursion step at the sizes of the theorems' regime, as a ratio to one (m x n) @ (n x n) product.

One step of the coefficient recursion (Lemmas 5.1/5.3) at ``n`` samples needs about three
products of an ``(m, n)`` matrix with an ``(n, n)`` one: the preactivations, the similarities over
the negatives and the update.  This script times a step of :func:`mmcl.simulate` (engine
``recursion``, the chapter's scaling :func:`mmcl.experiments.theorems_regime.regime_config`, span
draws, ``M = n/2``) and, in the same process and in alternating turns, one such product. The
ratio of the medians is the number to compare between versions of the kernel; the absolute times
depend on the machine and its load.

    .venv/bin/python benchmarks/bench_regime_step.py --dtype float64 --threads 2 --out bench_regime_step.json
"""
from __future__ import annotations

import statistics
import time

import torch

from common import describe_machine, parse, parser, write_report

import mmcl
from mmcl.experiments.theorems_regime import regime_config


def _time(fn, turns: int):
    out = []
    for _ in range(turns):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main(argv=None) -> int:
    ap = parser(__doc__, "n = 500 and 1,000 only, 2 turns")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="values of n (default 1000 2000)")
    ap.add_argument("--steps", type=int, default=10, help="steps per timed run (default 10)")
    ap.add_argument("--turns", type=int, default=5, help="alternating turns of step and product (default 5)")
    args = parse(ap, argv)
    sizes = args.sizes or ([500, 1000] if args.quick else [1000, 2000])
    turns = 2 if args.quick else args.turns
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    rows = []
    print(f"recursion step / one (m x n) @ (n x n) product, {args.dtype}, {describe_machine()}")
    print(f"{'n':>6} {'mode':>6} {'step ms':>9} {'product ms':>11} {'ratio':>7}")
    for n in sizes:
        cfg = regime_config(n).replace(n_epochs=args.steps)
        data = mmcl.sample_synthetic(cfg, seed=0, span=True, dtype=dtype).to(device=args.device)
        A = torch.randn(cfg.m, n, dtype=dtype, device=args.device)
        G = torch.randn(n, n, dtype=dtype, device=args.device)
        for mode in ("single", "multi"):
            def run():
                mmcl.simulate(cfg, data, mode, "recursion", record_every=args.steps)

            def product():
                for _ in range(args.steps):
                    A @ G

            run()  # warm-up: allocations and the first call's dispatch
            step, prod = [], []
            for _ in range(turns):
                step += _time(run, 1)
                prod += _time(product, 1)
            s, p = statistics.median(step) / args.steps, statistics.median(prod) / args.steps
            rows.append({"n": n, "mode": mode, "step_s": s, "product_s": p, "ratio": s / p,
                         "ratios": [a / b for a, b in zip(step, prod)], "M": cfg.M, "m": cfg.m, "d": cfg.d})
            print(f"{n:>6} {mode:>6} {1e3 * s:>9.2f} {1e3 * p:>11.2f} {s / p:>7.1f}")
    write_report({"dtype": args.dtype, "steps": args.steps, "turns": turns, "rows": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
