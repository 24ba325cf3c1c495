"""``mmcl coloredmnist``: the paper's Table 1 on ColoredMNIST without the book.

``mmcl coloredmnist --seeds 3 --out DIR`` trains every run of
``mmcl.experiments.coloredmnist.runs.RUNS`` at seeds 0..2 and writes ``DIR/results.json`` (variant ->
train/test accuracy, mean and s.d. over seeds, per-seed values, feature probes, settings, times),
``DIR/table1.md`` and the figures ``table1-coloredmnist``, ``coloredmnist-feature-probes``,
``coloredmnist-probe-l2`` and ``coloredmnist-samples`` (PDF, SVG, PNG; drawn by
:mod:`mmcl.figures.coloredmnist`).  ``--ablations`` adds the ablation runs (``ABLATIONS``);
``--sensitivity`` reruns the main comparison under each change of ``SENSITIVITY``
(``sensitivity.json``, ``sensitivity.md``).
"""
from __future__ import annotations

import json
import sys
import time

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    from mmcl.experiments.coloredmnist.runs import ABLATIONS, RUNS

    p = sub.add_parser("coloredmnist", help="ColoredMNIST: the paper's Table 1 (multi- vs single-modal)",
                       description="Train every ColoredMNIST variant of Table 1 over seeds; write results.json, "
                                   "table1.md and the figures (PDF, SVG, PNG).")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--seeds", type=int, default=3, help="number of seeds, 0..N-1 (default 3)")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:K")
    p.add_argument("--runs", nargs="+", default=None, choices=[*RUNS, *ABLATIONS], metavar="RUN",
                   help=f"runs to train (default: all of {', '.join(RUNS)}); ablations: {', '.join(ABLATIONS)}")
    p.add_argument("--ablations", action="store_true", help="also train the ablation runs")
    p.add_argument("--sensitivity", action="store_true",
                   help="also rerun multi and single_crop_flip under each one-at-a-time change of SENSITIVITY "
                        "(writes sensitivity.json and sensitivity.md)")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default: TrainConfig's)")
    p.add_argument("--image-size", type=int, default=None, choices=(14, 28),
                   help="14 (default, 2x2 average-pooled) or 28 (native)")
    p.add_argument("--n-images", type=int, default=None, help="digits used from the source (default: all)")
    p.add_argument("--mnist", default=None, metavar="DIR",
                   help="folder of MNIST IDX files (e.g. the full 70,000); default: the 10,000 shipped digits")
    p.add_argument("--no-cache", action="store_true", help="recompute every run (ignore the on-disk cache)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args) -> int:
    from dataclasses import replace
    from pathlib import Path

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmcl._utils import check_int, writable_dir
    from mmcl.experiments.coloredmnist.data import ColoredMNISTConfig, make_colored_mnist
    from mmcl.experiments.coloredmnist.runs import ABLATIONS, RUNS
    from mmcl.experiments.coloredmnist.sensitivity import run_sensitivity
    from mmcl.experiments.coloredmnist.table1 import run_table1
    from mmcl.experiments.coloredmnist.tables import format_sensitivity, format_table
    from mmcl.experiments.coloredmnist.train import TrainConfig
    # the command writes the chapter's figures, drawn in the figures layer (imported at run time only)
    from mmcl.figures import save_figure
    from mmcl.figures.coloredmnist import (draw_feature_probes, draw_gap, draw_probe_l2, draw_samples,
                                           draw_table1)

    check_int("--seeds", args.seeds)
    writable_dir("--out", args.out)  # before the minutes of training, not after
    if args.epochs is not None:
        check_int("--epochs", args.epochs)
    if args.n_images is not None:
        check_int("--n-images", args.n_images, minimum=20)
    data_cfg = ColoredMNISTConfig()
    if args.image_size is not None:
        data_cfg = replace(data_cfg, image_size=args.image_size)
    if args.n_images is not None:
        data_cfg = replace(data_cfg, n_images=args.n_images)
    train_cfg = TrainConfig() if args.epochs is None else TrainConfig(epochs=args.epochs)
    runs = list(args.runs) if args.runs else list(RUNS)
    if args.ablations:
        runs += [r for r in ABLATIONS if r not in runs]
    progress = False if args.no_progress else sys.stderr.isatty()
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_table1(range(args.seeds), runs, data_cfg=data_cfg, train_cfg=train_cfg, device=args.device,
                     source=args.mnist, progress=progress, cache=not args.no_cache)
    out = Path(args.out)
    paths = [res.write_json(out / "results.json")]
    (out / "table1.md").write_text(format_table(res) + "\n")
    paths.append(out / "table1.md")
    drawings = [(draw_gap(res), "coloredmnist-gap"), (draw_table1(res), "table1-coloredmnist"),
                (draw_feature_probes(res), "coloredmnist-feature-probes"), (draw_probe_l2(res), "coloredmnist-probe-l2"),
                (draw_samples(make_colored_mnist(data_cfg, 0, args.mnist)), "coloredmnist-samples")]
    for fig, name in drawings:
        paths += save_figure(fig, name, out)
        plt.close(fig)
    if args.sensitivity:
        sens = run_sensitivity(range(args.seeds), data_cfg=data_cfg, train_cfg=train_cfg, device=args.device,
                               source=args.mnist, progress=progress, cache=not args.no_cache)
        (out / "sensitivity.json").write_text(json.dumps({k: r.to_json() for k, r in sens.items()}, indent=2))
        (out / "sensitivity.md").write_text(format_sensitivity(sens) + "\n")
        paths += [out / "sensitivity.json", out / "sensitivity.md"]
        print(format_sensitivity(sens))
    print(format_table(res))
    for p in paths:
        print(f"wrote {p}")
    print(f"done in {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU "
          f"(cached runs cost nothing; MMCL_CACHE=0 or --no-cache recomputes)")
    return 0
