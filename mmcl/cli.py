"""The ``mmcl`` command line.

``mmcl figure NAME --out DIR`` makes any figure of the book without building it (``mmcl figure
--list`` lists them; ``mmcl figure fig1 --seeds 5`` is the paper's Figure 1 with its own options);
the other subcommands (ColoredMNIST, sweeps, the decisive runs, a talk's deck, the GPU check, notebooks, the CPU code path) register
themselves in
``COMMANDS``.
"""
from __future__ import annotations

import argparse
import os
import importlib
import sys
import time
from typing import List, Optional

# subcommand -> "module:function" adding its parser; imported lazily so that `mmcl --help` is fast
COMMANDS = {
    "figure": "mmcl.cli:_add_figure",
    "coloredmnist": "mmcl.commands.coloredmnist:add_parser",
    "sweep": "mmcl.commands.sweep:add_parser",
    "regime": "mmcl.commands.regime:add_parser",
    "window": "mmcl.commands.window:add_parser",
    "talk": "mmcl.commands.talk:add_parser",
    "gpu-check": "mmcl.commands.gpu_check:add_parser",
    "notebooks": "mmcl.booksupport.notebooks:add_parser",
    "codepath": "mmcl.codepath:add_parser",
}

def _add_figure(sub) -> None:
    p = sub.add_parser("figure", help="make any figure of the book (mmcl figure --list)",
                       description="Make a figure of the book as PDF, SVG and PNG, without building the book. "
                                   "NAME is a registered figure (mmcl figure --list), or fig1: the paper's "
                                   "Figure 1 with --seeds/--engine/--dtype.")
    p.add_argument("name", nargs="?", help="the figure's stable name, e.g. fig1-dynamics, stage1-noise-growth")
    p.add_argument("--list", action="store_true", help="list the registered figures with their captions")
    p.add_argument("--out", help="output folder (created if missing)")
    p.add_argument("--size", default="default", choices=("tiny", "default", "full"),
                   help="default: what the book shows on a CPU; full: MMCL_BOOK_FULL=1's sizes; tiny: seconds")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:K")
    p.add_argument("--style", default="page", choices=("page", "talk"),
                   help="page (default): as the book shows it; talk: 16:9 with slide-sized type, written as NAME-talk.*")
    p.add_argument("--seeds", type=int, default=5, help="fig1 only: number of seeds, 0..N-1 (default 5)")
    p.add_argument("--engine", default="recursion", choices=("recursion", "gd", "autograd"),
                   help="fig1 only: dynamics engine (default recursion: exact and fastest)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"), help="fig1 only")
    p.set_defaults(func=_run_figure)


def _run_figure(args) -> int:
    from mmcl.figures import registry

    if args.list:
        for spec in registry.figures().values():
            mark = "*" if spec.takeaway else " "
            print(f"{mark} {spec.name:<28} {spec.chapter:<24} {spec.caption}")
        print("* a chapter's takeaway figure (for a slide: mmcl figure NAME --style talk --out DIR)")
        return 0
    if not args.name:
        raise ValueError("give a figure NAME (mmcl figure --list shows them) or --list")
    if not args.out:
        raise ValueError("--out DIR is required to write a figure")
    from mmcl._utils import writable_dir

    writable_dir("--out", args.out)  # before drawing (a figure may train), not after
    t0 = time.perf_counter()
    if args.name == "fig1":
        if args.style != "page":
            raise ValueError("--style talk applies to registered figures: use 'mmcl figure fig1-dynamics --style talk'")
        paths = _figure1(args)
    else:
        paths = registry.save(args.name, args.out, size=args.size, device=args.device, style=args.style)
    for p in paths:
        print(f"wrote {p}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def _figure1(args):
    """``mmcl figure fig1``: Figure 1 with a chosen number of seeds, engine and precision."""
    from mmcl.model.config import SyntheticConfig
    from mmcl.experiments.figure1 import run_figure1
    from mmcl.figures.figure1 import draw_figure1
    from mmcl.figures.theme import save_figure

    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    res = run_figure1(SyntheticConfig(), range(args.seeds), engine=args.engine, device=args.device,
                      dtype=args.dtype, progress=sys.stderr.isatty())
    paths = save_figure(draw_figure1(res), "fig1-dynamics", args.out)
    for mode, c in res.curves.items():
        f = c.final()
        print(f"{mode:>6}: loss {f['loss']:.4f}  OOD acc adapt {f['acc_adapt']:.3f} transfer {f['acc_transfer']:.3f}  "
              f"max gamma {f['max_gamma']:.3f}  max rho {f['max_rho']:.3f}")
    return paths


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmcl", description="mmcl: single- vs multi-modal contrastive learning (Huang et al., NeurIPS 2024)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, target in COMMANDS.items():
        module, func = target.split(":")
        try:
            add = getattr(importlib.import_module(module), func)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):  # that subcommand's module is absent: leave it out
                continue
            raise  # a dependency of the module is missing: say so rather than hide the command
        add(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        parser.exit(2, f"mmcl {args.command}: error: {exc}\n")


def entry() -> None:  # pragma: no cover - the console script; tests call main()
    """The ``mmcl`` command: :func:`main`, then exit without the interpreter's teardown, which takes
    about a second once torch is loaded (``benchmarks/bench_choices.py`` times it) and does
    nothing a finished command needs.  Every file a command writes is closed before :func:`main` returns; only the standard
    streams are flushed here.  An exception propagates as usual (normal exit)."""
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    entry()
