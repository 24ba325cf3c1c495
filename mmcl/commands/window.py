"""The command line ``mmcl window --n N [--seeds K] [--device cpu] [--out DIR]``: the window of test
signals at one size of the decisive runs.

Both modes are trained once per seed on the decisive scaling
(:func:`~mmcl.experiments.decisive_runs.run_decisive`); each is scored on a log grid of
``cos(nu, mu)`` from Sec. 3.3's value to 1 (:func:`mmcl.downstream.tilt.tilt_curves`).  Writes
``DIR/results.json`` (:func:`mmcl.experiments.window.window_json`: ``config``, ``cos``,
``sec33_cos``, ``modes[mode][protocol]`` with ``errors``, ``predicted_threshold`` and
``measured_threshold``) and the figure ``window-errors`` (PDF, SVG, PNG), and prints the thresholds
and the window."""
from __future__ import annotations

import json
import sys

from mmcl.commands.regime import add_run_arguments, check_run_arguments

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Register ``mmcl window`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("window", help="the window of test signals at one n (results.json and its figure)",
                       description="Train both modes at n on the decisive scaling and score each on a grid of "
                                   "cos(nu, mu) from Sec. 3.3's value to 1: the OOD errors of both protocols, "
                                   "the predicted and measured angles where they fall to 0.25, and the window "
                                   "where the multi-modal error is small and the single-modal one is not.")
    add_run_arguments(p)
    p.add_argument("--out", default="window", help="output folder (created if missing; default ./window)")
    p.set_defaults(func=run)


def run(args) -> int:
    """``mmcl window``: check the output folder, run, write ``results.json`` and the figure, print."""
    out = check_run_arguments(args)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmcl.experiments import window as experiment
    from mmcl.experiments.decisive_runs import run_decisive
    from mmcl.figures.theme import save_figure
    from mmcl.figures.window import draw_errors

    res = run_decisive(args.n, args.seeds, device=args.device, dtype=args.dtype, progress=sys.stderr.isatty())
    path = out / "results.json"
    path.write_text(json.dumps(experiment.window_json(res), indent=1))
    fig = draw_errors(res)
    written = save_figure(fig, "window-errors", out)
    plt.close(fig)
    print(f"n = {res.n}, d = {res.cfg.d:.3e}, {len(res.seeds)} seed(s), {res.seconds:.0f} s; "
          f"Sec. 3.3's cos(nu, mu) = {res.cfg.nu_cos:.3g}")
    print(experiment.threshold_rows({res.n: res}))
    print(f"wrote {path}" + "".join(f", {p}" for p in written))
    return 0
