"""Cost of one recursion step at the sizes of the theorems' regime, as a ratio to one (m x n) @ (n x n) product.

One step of the coefficient recursion (Lemmas 5.1/5.3) at ``n`` samples needs about three
products of an ``(m, n)`` matrix with an ``(n, n)`` one: the preactivations, the similarities over
the negatives and the update.  This script times :func:`mmcl.simulate` (engine ``recursion``, the
chapter's scaling :func:`mmcl.experiments.theorems_regime.regime_config`, span draws, ``M = n/2``,
so the class-block step of :mod:`mmcl.dynamics.kernel`) and, in the same process and in
alternating turns, one such product.  Two numbers per size and mode:

* ``step``: the cost of one more step, ``(run of T steps - run of 1 step) / (T - 1)``; what a
  run costs besides its steps, ``setup`` (a run of one step less two steps), is the Gram
  matrices, ``O(n^2 d)`` with ``d`` the width of the span basis, about ``2n``: it grows as
  ``n/m`` times a product;
* ``run``: a whole run of ``T`` steps divided by ``T``, the setup included (what a ``T``-step
  run costs per step; at ``T = 10`` and ``n >= 2000`` the setup is most of it).

Each is the ratio of medians (wall clock), and also of process CPU time (all threads): the CPU
ratio moves less when other jobs share the machine.  The absolute times depend on the machine
and its load.

    .venv/bin/python benchmarks/bench_regime_step.py --dtype float64 --threads 2 --out bench_regime_step.json
"""
from __future__ import annotations

import statistics
import time

import torch

from common import describe_machine, parse, parser, write_report

import mmcl
from mmcl.experiments.theorems_regime import regime_config


def _time(fn):
    """``(wall, cpu)`` seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main(argv=None) -> int:
    ap = parser(__doc__, "n = 500 and 1,000 only, 2 turns")
    ap.add_argument("--sizes", type=int, nargs="+", default=None, help="values of n (default 1000 2000 4000)")
    ap.add_argument("--steps", type=int, default=10, help="steps T per timed run (default 10)")
    ap.add_argument("--turns", type=int, default=3, help="alternating turns of runs and products (default 3)")
    args = parse(ap, argv)
    if args.steps < 2:
        raise ValueError(f"--steps must be at least 2 (a step is timed as a difference of runs), got {args.steps}")
    sizes = args.sizes or ([500, 1000] if args.quick else [1000, 2000, 4000])
    turns = 2 if args.quick else args.turns
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    T = args.steps
    rows = []
    print(f"recursion step / one (m x n) @ (n x n) product, {args.dtype}, T = {T}, {describe_machine()}")
    print(f"{'n':>6} {'mode':>6} {'product ms':>11} {'step ms':>9} {'setup ms':>9} {'step':>6} {'run':>6}"
          f" {'step cpu':>9} {'run cpu':>8}")
    for n in sizes:
        cfg = regime_config(n).replace(n_epochs=T)
        data = mmcl.sample_synthetic(cfg, seed=0, span=True, dtype=dtype, with_ood=False).to(device=args.device)
        A = torch.randn(cfg.m, n, dtype=dtype, device=args.device)
        G = torch.randn(n, n, dtype=dtype, device=args.device)
        for mode in ("single", "multi"):
            def run(steps):
                mmcl.simulate(cfg.replace(n_epochs=steps), data, mode, "recursion", record_every=max(1, steps))

            def product():
                for _ in range(T):
                    A @ G

            run(1)  # warm-up: allocations and the first call's dispatch
            full, one, prod = [], [], []
            for _ in range(turns):
                full.append(_time(lambda: run(T)))
                one.append(_time(lambda: run(1)))
                prod.append(_time(product))
            med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
            p, pc = med(prod, 0) / T, med(prod, 1) / T
            s, sc = (med(full, 0) - med(one, 0)) / (T - 1), (med(full, 1) - med(one, 1)) / (T - 1)
            setup = med(one, 0) - 2 * s  # a one-step run evaluates the step twice (t = 0, 1)
            r, rc = med(full, 0) / T, med(full, 1) / T
            rows.append({"n": n, "mode": mode, "product_s": p, "step_s": s, "setup_s": setup, "run_s": r,
                         "ratio_step": s / p, "ratio_run": r / p, "ratio_step_cpu": sc / pc, "ratio_run_cpu": rc / pc,
                         "turns": {"run": full, "one_step": one, "product": prod}, "M": cfg.M, "m": cfg.m, "d": cfg.d})
            print(f"{n:>6} {mode:>6} {1e3 * p:>11.2f} {1e3 * s:>9.2f} {1e3 * setup:>9.1f} {s / p:>6.1f} {r / p:>6.1f}"
                  f" {sc / pc:>9.1f} {rc / pc:>8.1f}")
    write_report({"dtype": args.dtype, "steps": T, "turns": turns, "rows": rows}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
