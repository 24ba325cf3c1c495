"""The measurements behind the implementation choices the code's comments give reasons for.

Each row times a choice against its alternative in the same run (best of ``--repeat``) and
prints the ratio:

* ``exp2`` against ``exp`` on 100k entries (the kernel keeps its logits in base 2);
* ``exp`` of ``-inf`` entries against finite ones (why masked logits are floored, not -inf);
* ``exp2`` of exponents below -126 (float32 denormal results) against ordinary ones (why the
  exponents are clamped at -80 log2 e);
* a step's temporaries reused against allocated afresh (``Workspace``), on the multi-modal
  step of a batch of 16 Figure 1 draws;
* Figure 1's evaluation products folded into one product against a broadcast batched product
  (``forward._fold_states``);
* a default recursion run with one torch thread against two (``chapter_setup`` uses one);
* ``mmcl figure --list`` exiting through ``os._exit`` against the interpreter's teardown.

    python benchmarks/bench_choices.py [--repeat 5] [--out bench_choices.json]
"""
from __future__ import annotations

import subprocess
import sys
import time

import torch

import common
import mmcl


def _best(fn, repeat):
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _row(rows, name, chosen, alternative, repeat):
    a, b = _best(chosen, repeat), _best(alternative, repeat)
    rows.append({"choice": name, "chosen_s": a, "alternative_s": b, "speed-up": b / a})
    print(f"{name:<58} {a * 1e6:>11.1f} us {b * 1e6:>11.1f} us {b / a:>7.2f}x", flush=True)


def main(argv=None):
    ap = common.parser(__doc__, "fewer repeats")
    ap.add_argument("--repeat", type=int, default=7)
    args = common.parse(ap, argv)
    repeat = 3 if args.quick else args.repeat
    print(common.describe_machine())
    print(f"{'choice':<58} {'chosen':>14} {'alternative':>14} {'ratio':>8}")
    rows = []
    x = torch.randn(100_000)
    out = torch.empty_like(x)
    _row(rows, "exp2 vs exp, 100k float32", lambda: torch.exp2(x, out=out), lambda: torch.exp(x, out=out), repeat * 20)
    inf = x.clone()
    inf[::2] = float("-inf")
    _row(rows, "exp of finite vs half -inf entries, 100k", lambda: torch.exp(x, out=out),
         lambda: torch.exp(inf, out=out), repeat * 20)
    low = x - 200.0  # exponents below -126: denormal or zero float32 results
    _row(rows, "exp2 of ordinary vs denormal-range exponents, 100k", lambda: torch.exp2(x, out=out),
         lambda: torch.exp2(low, out=out), repeat * 20)

    from mmcl.dynamics.grams import Grams, build_networks
    from mmcl.dynamics.kernel import Contrast, Workspace, _step_multi

    cfg = mmcl.SyntheticConfig()
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, with_ood=False) for s in range(16)])
    lr = torch.full((16,), cfg.lr)
    tau = torch.full((16,), cfg.tau)
    nets = build_networks(data, "multi")
    k = Contrast(data, lr, tau, copies=2)
    X = torch.cat([Grams(net).X0 for net in nets])
    ws = Workspace(X)
    _row(rows, "multi-modal step, 16 draws: buffers reused vs fresh", lambda: _step_multi(k, X, data.n, ws),
         lambda: _step_multi(k, X, data.n, Workspace(X)), repeat * 5)

    from mmcl.dynamics.forward import _fold_states

    rho = torch.randn(21, 5, cfg.m, cfg.n)  # Figure 1's 21 evaluated steps of 5 draws
    V = torch.randn(5, cfg.n, 1200)
    _row(rows, "rho @ <xi, v>, 21 steps x 5 draws: folded vs broadcast", lambda: _fold_states(rho, V),
         lambda: rho @ V, repeat * 5)

    single = mmcl.sample_synthetic(cfg, 0)
    old = torch.get_num_threads()

    def run(threads):
        def go():
            torch.set_num_threads(threads)
            mmcl.simulate(cfg, single, "single", "recursion")
        return go
    _row(rows, "default recursion run: 1 thread vs 2", run(1), run(2), repeat)
    torch.set_num_threads(old)

    def cli(teardown):
        code = ("import sys; sys.argv = ['mmcl', 'figure', '--list']; import mmcl.cli as c; "
                + ("sys.exit(c.main())" if teardown else "c.entry()"))
        return lambda: subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    _row(rows, "`mmcl figure --list`: os._exit vs interpreter teardown", cli(False), cli(True), max(2, repeat // 2))
    common.write_report({"rows": rows, "repeat": repeat}, args.out)


if __name__ == "__main__":
    main()
