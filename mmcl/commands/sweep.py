"""The command line ``mmcl sweep CONFIG.toml --out DIR`` (see ``examples/sweep.toml``).

It runs the file's sweep, writes the table and draws a phase diagram per ``[[plot]]`` and the
measured ``T1`` over the lemmas' formula with the drawings of ``mmcl.figures.phase``."""
from __future__ import annotations

import math
import sys
from pathlib import Path

from mmcl.experiments.sweep.phase import phase_grid
from mmcl.experiments.sweep.runner import sweep
from mmcl.model.config import SyntheticConfig

__all__ = ["add_parser", "load_toml", "run"]


def add_parser(sub) -> None:
    """Register ``mmcl sweep`` on the subparsers ``sub`` of ``mmcl.cli.build_parser``."""
    p = sub.add_parser("sweep", help="run a parameter sweep from a TOML file",
                       description="Run a grid of synthetic experiments (see examples/sweep.toml) and write "
                                   "the table (CSV, and Parquet where pyarrow is installed) and the figures.")
    p.add_argument("config", help="TOML file with [sweep], [base], [grid] and optional [[plot]] tables")
    p.add_argument("--out", required=True, help="output folder (created if missing)")
    p.add_argument("--device", default=None, help="cpu or cuda (overrides the file)")
    p.add_argument("--format", default="csv", choices=("csv", "parquet", "both"), help="table format (default csv)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the on-disk cache")
    p.add_argument("--scheduler", default=None,
                   help="address of a dask.distributed scheduler to run the batches on (needs mmcl[dask])")
    p.set_defaults(func=run)


_SWEEP_KEYS = {"seeds", "modes", "engine", "dtype", "device", "batch_size", "memory_mb", "protocols", "t1_level", "span",
               "record_every", "score_init"}
_PLOT_KEYS = {"x", "y", "value", "name", "xlog", "ylog", "title", "filter"}


def load_toml(path) -> dict:
    """Read and check a sweep file (unknown tables or keys are errors)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    path = Path(path)
    if not path.exists():
        raise ValueError(f"sweep file {str(path)!r} does not exist")
    try:
        spec = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"sweep file {str(path)!r} is not valid TOML: {exc}") from exc
    unknown = set(spec) - {"sweep", "base", "grid", "plot"}
    if unknown:
        raise ValueError(f"sweep file: unknown table(s) {sorted(unknown)}; valid: [sweep], [base], [grid], [[plot]]")
    bad = set(spec.get("sweep", {})) - _SWEEP_KEYS
    if bad:
        raise ValueError(f"sweep file: unknown key(s) {sorted(bad)} in [sweep]; valid: {sorted(_SWEEP_KEYS)}")
    if "grid" not in spec or not spec["grid"]:
        raise ValueError("sweep file: a [grid] table with at least one parameter is required")
    for pl in spec.get("plot", []):
        bad = set(pl) - _PLOT_KEYS
        if bad or "x" not in pl or "y" not in pl:
            raise ValueError(f"sweep file: each [[plot]] needs x and y and takes only {sorted(_PLOT_KEYS)}, got {pl}")
    return spec


def run(args) -> int:
    """``mmcl sweep``: run the file's sweep, write ``sweep.csv``/``sweep.parquet``, a phase diagram
    per ``[[plot]]`` and ``sweep-t1-ratio``, and print a summary."""
    import matplotlib

    matplotlib.use("Agg")
    from mmcl._utils import writable_dir
    from mmcl.figures import save_figure, style  # imported when the command runs: `mmcl --help` stays fast

    from mmcl.figures.phase import draw_phase_diagram, draw_t1_ratio

    out = writable_dir("--out", args.out)  # before the sweep runs, not after

    spec = load_toml(args.config)
    s = dict(spec.get("sweep", {}))
    seeds = s.pop("seeds", 3)
    seeds = range(seeds) if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    modes = s.pop("modes", ["single", "multi"])
    engine = s.pop("engine", "recursion")
    file_device = s.pop("device", None)
    device = args.device or file_device  # the command line wins over the file
    if "protocols" in s:
        s["protocols"] = tuple(s["protocols"])
    try:
        base = SyntheticConfig().replace(**spec.get("base", {}))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"sweep file [base]: {exc}") from exc
    client = None
    if args.scheduler:
        try:
            from distributed import Client
        except ImportError as exc:
            raise ValueError("--scheduler needs dask.distributed: pip install 'mmcl[dask]'") from exc
        client = Client(args.scheduler)
    table = sweep(spec["grid"], seeds, modes, engine, device=device, base=base, client=client,
                  cache=not args.no_cache, progress=sys.stderr.isatty(), **s)
    written = []
    if args.format in ("csv", "both"):
        written.append(table.to_csv(out / "sweep.csv"))
    if args.format in ("parquet", "both"):
        written.append(table.to_parquet(out / "sweep.parquet"))
    import matplotlib.pyplot as plt

    for i, pl in enumerate(spec.get("plot", [])):
        t = table.filter(**pl.get("filter", {}))
        pg = phase_grid(t, pl["x"], pl["y"], pl.get("value", f"acc_{table.meta['protocols'][0]}"))
        with style():
            fig = draw_phase_diagram(pg, xlog=pl.get("xlog", False), ylog=pl.get("ylog", False),
                                        title=pl.get("title"))
            written += save_figure(fig, pl.get("name", f"sweep-phase-{i + 1}"), out)
        plt.close(fig)
    with style():
        fig = draw_t1_ratio({"sweep": table})
        written += save_figure(fig, "sweep-t1-ratio", out)
    plt.close(fig)
    m = table.meta
    print(f"{m['runs']} runs ({m['computed']} computed in {m['batches']} batches, {m['cached']} from the cache) "
          f"in {m['wall_s']:.1f} s")
    acc = f"acc_{m['protocols'][0]}"
    for mode in m["modes"]:
        accs = [v for v in table.filter(mode=mode).column(acc) if math.isfinite(v)]
        if accs:
            print(f"{mode:>6}: mean {acc} {sum(accs) / len(accs):.3f} over {len(accs)} runs")
    for p in written:
        print(f"wrote {p}")
    if client is not None:
        client.close()
    return 0
