"""The command line ``mmcl regime --n N [--seeds K] [--device cpu] --out DIR``: one size of the
decisive runs (:func:`~mmcl.experiments.decisive_runs.run_decisive`: ``d`` at Lemma B.2's bound,
Sec. 3.3's ``nu`` and the paper's parallel one on the same trained networks), written to
``DIR/results.json``.

Per mode (``"single"``, ``"multi"``): ``failing_conditions`` (the keys of the conditions that fail
among those the mode's theorem uses; ``failing_conditions_all``: all of them), ``sec33``
(``ratio`` of ``<nu, mu>`` to ``||mu||^2/sqrt(d)`` and ``holds``), ``loss`` (final, mean over
seeds) and ``ood_error[nu][protocol]`` (``nu`` in ``"sec33"``, ``"parallel"``; ``protocol`` in
``"adapt"``, ``"transfer"``), with per-seed values, the coefficients, the response parts and the
ablations beside them; plus ``config`` and ``seconds``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["add_parser", "run", "add_run_arguments", "check_run_arguments"]


def add_parser(sub) -> None:
    """Register ``mmcl regime`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("regime", help="one size of the decisive runs (results.json)",
                       description="Train both modes at n on the decisive scaling (d at Lemma B.2's bound, "
                                   "Sec. 3.3's nu) and write DIR/results.json: failing conditions, Sec. 3.3's "
                                   "ratio, the final loss and the OOD errors under both nu and both protocols.")
    add_run_arguments(p)
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.set_defaults(func=run)


def add_run_arguments(p) -> None:
    """The options of one size of the decisive runs, shared by ``mmcl regime`` and ``mmcl window``:
    ``--n``, ``--seeds``, ``--device``, ``--dtype``."""
    p.add_argument("--n", type=int, required=True, help="training samples (even, >= 100 for span draws at m = 50)")
    p.add_argument("--seeds", type=int, default=1, help="seeds 0..K-1 (default 1)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"), help="default float32")


def check_run_arguments(args):
    """Check :func:`add_run_arguments`' options and that ``--out`` can be written (before the minutes of
    training, not after); returns the output folder."""
    from mmcl._utils import check_int, writable_dir

    check_int("--n", args.n, 2)
    if args.n % 2:
        raise ValueError(f"--n must be even (balanced labels), got {args.n}")
    check_int("--seeds", args.seeds)
    return writable_dir("--out", args.out)


def run(args) -> int:
    """``mmcl regime``: run, write ``results.json`` and print a summary."""
    from mmcl.experiments.decisive_runs import run_decisive

    check_run_arguments(args)
    res = run_decisive(args.n, args.seeds, device=args.device, dtype=args.dtype, progress=sys.stderr.isatty())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    path.write_text(json.dumps(res.to_json(), indent=1))
    print(f"n = {res.n}, d = {res.cfg.d:.3e}, {len(res.seeds)} seed(s), {res.seconds:.0f} s; "
          f"Sec. 3.3 ratio {res.sec33_ratio:.3g}")
    for mode, r in res.modes.items():
        errs = ", ".join(f"{nu}/{p} {float(r.error[nu, p].mean()):.3f}" for nu in ("sec33", "parallel")
                         for p in ("adapt", "transfer"))
        print(f"{mode:>6}: failing {', '.join(res.failing_for(mode)) or 'none'}; loss {float(r.loss.mean()):.4f}; "
              f"OOD error {errs}")
    print(f"wrote {path}")
    return 0
