"""What the benchmark scripts share: their common command-line options, and the facts about the
machine that go into every report (timings of a loaded or threaded machine are not comparable)."""
from __future__ import annotations

import argparse
import json
import os
import platform

import torch


def parser(doc: str, quick_help: str) -> argparse.ArgumentParser:
    """An argument parser described by the first line of ``doc``, with ``--quick``, ``--device``,
    ``--dtype``, ``--threads`` and ``--out``; the script adds its own options."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's choice)")
    ap.add_argument("--out", default=None, help="write the results as JSON here")
    return ap


def parse(ap: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """Parse ``argv`` and apply ``--threads``."""
    args = ap.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    return args


def machine() -> dict:
    """torch version and threads, CPUs, load average and platform, for the report."""
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
            "loadavg": os.getloadavg(), "platform": platform.platform()}


def describe_machine() -> str:
    """One line for the printed table."""
    return (f"torch threads={torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} CPUs")


def write_report(report: dict, path) -> None:
    """Write ``report`` (with :func:`machine`) as JSON to ``path`` if one was given."""
    if path:
        with open(path, "w") as f:
            json.dump({**report, **machine()}, f, indent=2, default=str)
        print(f"wrote {path}")
