"""Wall-clock time of one AGD iteration (mmcl.wider.agd.agd) on 100 x 100 rank-5 matrices,
width 10, float64, for 1 and for torch's default number of threads, batch 1 and 5.

    .venv/bin/python benchmarks/bench_factorization.py

Speed is never asserted in tests; this prints numbers to compare machines and settings.  On a
shared machine the numbers vary a lot: say so when quoting them.
"""
from __future__ import annotations

import time

import torch

from mmcl.wider import agd


def per_iteration(batch: int, iters: int = 400) -> float:
    A = torch.stack([agd.low_rank_matrix(100, 100, 5, 10.0, s) for s in range(batch)])
    if batch == 1:
        A = A[0]
    t0 = time.perf_counter()
    res = agd.agd(A, 10, init="gaussian", tol=1e-15, max_iter=iters)  # tol unreachable: runs max_iter
    dt = time.perf_counter() - t0
    assert int(res.iterations.max()) == iters
    return dt / iters


def main() -> None:
    default = torch.get_num_threads()
    print(f"torch {torch.__version__}, default threads {default}")
    for threads in sorted({1, default}):
        torch.set_num_threads(threads)
        for batch in (1, 5):
            print(f"threads {threads}  batch {batch}:  {1e6 * per_iteration(batch):8.0f} us / AGD iteration")
    torch.set_num_threads(default)


if __name__ == "__main__":
    main()
