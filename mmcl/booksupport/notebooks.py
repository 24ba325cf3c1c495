"""``mmcl notebooks``: the book's chapters as Jupyter notebooks.

* ``mmcl notebooks list`` -- the chapters of ``_toc.yml``;
* ``mmcl notebooks export --out DIR`` -- write an ``.ipynb`` copy of every chapter (jupytext);
* ``mmcl notebooks run CHAPTER --out DIR`` -- execute one chapter headless, writing its figures
  (PDF/SVG/PNG) into ``DIR`` and the executed notebook beside them: the command that regenerates
  any figure of the book.

Chapters are MyST-markdown notebooks (``book/<stem>.md``, named by their stem: ``single_stage1``);
the checkout that holds ``_toc.yml`` is found from the current directory, else from the installed
package, and its chapters are :func:`mmcl.figures.registry.chapters`.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

__all__ = ["book_root", "chapters", "export", "run_chapter", "add_parser"]


def book_root(start: Optional[str] = None) -> Path:
    """The folder with ``_toc.yml``: searched upwards from ``start`` (default: the current
    directory), then beside the installed package.  Raises ValueError if none is found."""
    here = Path(start or os.getcwd()).resolve()
    for p in (here, *here.parents, Path(__file__).resolve().parent.parent):
        if (p / "_toc.yml").exists():
            return p
    raise ValueError("no _toc.yml found above the current directory or beside the mmcl package; "
                     "run from a checkout of the mmcl repository")


def chapters(root: Optional[Path] = None) -> List[Path]:
    """The MyST chapters listed in ``_toc.yml`` (root first), as paths."""
    from mmcl.figures.registry import chapters as stems, toc_entries

    root = Path(root) if root is not None else book_root()
    pages = {Path(p).name.removesuffix(".md"): p for _, p in toc_entries(root)}
    return [root / (pages[s] if pages[s].endswith(".md") else pages[s] + ".md") for s in stems(root)]


def _jupytext():
    try:
        import jupytext
    except ImportError as exc:  # pragma: no cover - the book extra is missing
        raise ValueError("this command needs the book extra: pip install -e '.[book]'") from exc
    return jupytext


def export(out_dir, root: Optional[Path] = None) -> List[Path]:
    """Write ``out_dir/<stem>.ipynb`` for every chapter; returns the paths."""
    jupytext = _jupytext()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ch in chapters(root):
        nb = jupytext.read(ch)
        p = out / f"{ch.stem}.ipynb"
        jupytext.write(nb, p)
        paths.append(p)
    return paths


def _find(chapter: str, root: Optional[Path]) -> Path:
    found = [c for c in chapters(root) if chapter in (c.stem, c.name, str(c))]
    if not found:
        names = ", ".join(c.stem for c in chapters(root))
        raise ValueError(f"chapter={chapter!r} is not in _toc.yml; valid: {names}")
    return found[0]


def run_chapter(chapter: str, out_dir, root: Optional[Path] = None, timeout: int = 1800) -> Path:
    """Execute one chapter (by stem, e.g. ``single_stage1``) with its figures written to
    ``out_dir``; returns the executed notebook's path."""
    jupytext = _jupytext()
    from nbclient import NotebookClient

    ch = _find(chapter, root)
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(ch)
    old = os.environ.get("MMCL_FIGURE_DIR")
    os.environ["MMCL_FIGURE_DIR"] = str(out)
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(ch.parent)}}).execute()
    finally:
        if old is None:
            os.environ.pop("MMCL_FIGURE_DIR", None)
        else:
            os.environ["MMCL_FIGURE_DIR"] = old
    p = out / f"{ch.stem}.ipynb"
    jupytext.write(nb, p)
    return p


def add_parser(sub) -> None:
    p = sub.add_parser("notebooks", help="the book's chapters as Jupyter notebooks",
                       description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("action", choices=("list", "export", "run"))
    p.add_argument("chapter", nargs="?", help="for run: a chapter stem, e.g. single_stage1")
    p.add_argument("--out", help="output folder (export, run)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    if args.action == "list":
        for c in chapters():
            print(c.stem)
        return 0
    if not args.out:
        raise ValueError(f"`mmcl notebooks {args.action}` needs --out DIR")
    from mmcl._utils import writable_dir

    writable_dir("--out", args.out)  # before executing a chapter, not after
    if args.action == "export":
        for p in export(args.out):
            print(f"wrote {p}")
        print(f"open them with: jupyter lab {args.out}")
        return 0
    if not args.chapter:
        raise ValueError("`mmcl notebooks run` needs a CHAPTER (see `mmcl notebooks list`)")
    p = run_chapter(args.chapter, args.out)
    print(f"executed {p}; figures in {p.parent}", file=sys.stdout)
    return 0
