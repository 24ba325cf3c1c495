"""The ``mmcl`` command line.

``mmcl figure fig1 --out DIR [--seeds 5] [--device cuda]`` regenerates Figure 1 without the book;
later subcommands (ColoredMNIST, sweeps, notebooks) register themselves in :data:`COMMANDS`.
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
    "coloredmnist": "mmcl.coloredmnist.cli:add_parser",
    "sweep": "mmcl.sweep:add_parser",
    "notebooks": "mmcl.notebooks:add_parser",
}

FIGURES = ("fig1",)


def _add_figure(sub) -> None:
    p = sub.add_parser("figure", help="regenerate a figure of the paper/book",
                       description="Regenerate a figure as PDF, SVG and PNG.")
    p.add_argument("name", choices=FIGURES, help="which figure: fig1 = Figure 1 (synthetic dynamics)")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--seeds", type=int, default=5, help="number of seeds, 0..N-1 (default 5)")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:K")
    p.add_argument("--engine", default="recursion", choices=("recursion", "gd", "autograd"),
                   help="dynamics engine (default recursion: exact and fastest)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    p.set_defaults(func=_run_figure)


def _run_figure(args) -> int:
    from .config import SyntheticConfig
    from .experiments import plot_figure1, run_figure1

    if args.seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {args.seeds}")
    t0 = time.perf_counter()
    res = run_figure1(SyntheticConfig(), range(args.seeds), engine=args.engine, device=args.device,
                      dtype=args.dtype, progress=sys.stderr.isatty())
    _, paths = plot_figure1(res, args.out)
    for mode, c in res.curves.items():
        f = c.final()
        print(f"{mode:>6}: loss {f['loss']:.4f}  OOD acc adapt {f['acc_adapt']:.3f} transfer {f['acc_transfer']:.3f}  "
              f"max gamma {f['max_gamma']:.3f}  max rho {f['max_rho']:.3f}")
    for p in paths:
        print(f"wrote {p}")
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


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
    about a second once torch is loaded (measured: 0.9 s) and does nothing a finished command
    needs.  Every file a command writes is closed before :func:`main` returns; only the standard
    streams are flushed here.  An exception propagates as usual (normal exit)."""
    rc = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc or 0)


if __name__ == "__main__":  # pragma: no cover
    entry()
