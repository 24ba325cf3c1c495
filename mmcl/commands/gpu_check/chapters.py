"""Step 5 of the check (:mod:`mmcl.commands.gpu_check`): as many chapters as the budget leaves time
for, each executed in its own process (``python -m mmcl.commands.gpu_check _chapter MD JSON`` runs
``chapter_child``), or their figures drawn (``--tiny``).
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Dict, List, Tuple

from mmcl.commands.gpu_check.check import Check, child_env, clean_json, repo_root, run_child

__all__ = ["GPU_FIRST", "chapter_order", "chapter_cells"]


#: The chapters the ``chapters`` step tries first, those meant for a GPU (the decisive runs, the
#: window, the theorems' regime, the phase diagrams, ColoredMNIST); then the rest in the book's order
#: (:func:`chapter_order`, read from ``_toc.yml``).
GPU_FIRST = ("decisive_runs", "window", "theorems_regime", "phase_diagrams", "coloredmnist")


def chapter_order() -> Tuple[str, ...]:
    """:data:`GPU_FIRST`, then every other chapter of ``_toc.yml`` in the book's order."""
    from mmcl.figures.registry import chapters

    book = chapters()
    return tuple(c for c in GPU_FIRST if c in book) + tuple(c for c in book if c not in GPU_FIRST)


def step_chapters(ck: Check, res: dict) -> Tuple[str, str]:
    p = ck.profile
    res.update(method=p.chapter_method, size=p.chapter_size, chapters={})
    todo = chapter_order() if p.chapters is None else p.chapters
    if not todo:
        return "skipped", "skipped: no chapter asked for (--chapters none)"
    run_one = _chapter_notebook if p.chapter_method == "notebook" else _chapter_figures
    for ch in todo:
        if ck.remaining() <= 0:
            res["chapters"][ch] = {"status": "skipped", "seconds": 0.0, "message": "budget spent before it started"}
            continue
        ck.log(f"  chapter {ch} ({p.chapter_method}, size {p.chapter_size}) ...")
        t = time.perf_counter()
        try:
            entry = run_one(ck, ch)
        except Exception as exc:
            entry = {"status": "failed", "message": f"{type(exc).__name__}: {exc}"}
            ck.log_block(f"chapter {ch}: traceback", traceback.format_exc())
        entry["seconds"] = time.perf_counter() - t
        res["chapters"][ch] = entry
        counts = entry.get("verdicts")
        ck.log(f"  chapter {ch}: {entry['status']} in {entry['seconds']:.1f} s"
               + (f", claims {counts}" if counts else "") + (f": {entry['message']}" if entry.get("message") else ""))
        ck.save()
    ran = [c for c, e in res["chapters"].items() if e["status"] != "skipped"]
    bad = [c for c, e in res["chapters"].items() if e["status"] in ("failed", "timeout")]
    msg = f"{len(ran)} of {len(todo)} chapter(s) ran" + (f"; not finished: {', '.join(bad)}" if bad else "")
    # a chapter stopped by the budget is not a failure of the code; one that raised is
    failed = [c for c in bad if res["chapters"][c]["status"] == "failed"]
    return ("failed" if failed else "ok"), msg


def _chapter_figures(ck: Check, chapter: str) -> dict:
    """Draw every registered figure of ``chapter`` at the profile's size (the experiment's cached
    runs and the chapter's drawing functions), in this process."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmcl.figures import registry

    names = [s.name for s in registry.figures().values() if s.chapter == chapter]
    old = os.environ.get("MMCL_CACHE_DIR")
    os.environ["MMCL_CACHE_DIR"] = str(ck.work / "cache")
    drawn = []
    try:
        for name in names:
            if ck.remaining() <= 0:
                return {"status": "timeout", "figures": drawn, "message": "budget spent"}
            fig = registry.make(name, ck.profile.chapter_size, ck.device)
            plt.close(fig)
            drawn.append(name)
    finally:
        if old is None:
            os.environ.pop("MMCL_CACHE_DIR", None)
        else:
            os.environ["MMCL_CACHE_DIR"] = old
    return {"status": "ok", "figures": drawn, "message": ""}


def _chapter_notebook(ck: Check, chapter: str) -> dict:
    """Execute ``chapter`` in a child process (``chapter_child``) at the profile's size, killed
    when the budget is spent; its cells, time and claims."""
    path = repo_root() / "book" / f"{chapter}.md"
    if not path.exists():
        return {"status": "failed", "message": f"no chapter file {path}"}
    result = ck.work / f"chapter-{chapter}.json"
    figs = ck.work / "figures" / chapter
    env = {**child_env(ck), "MMCL_DEVICE": ck.device, "MMCL_FIGURE_DIR": str(figs),
           "MMCL_BOOK_FULL": "1" if ck.profile.chapter_size == "full" else "0", "MMCL_CACHE_DIR": str(ck.work / "cache")}
    cmd = [sys.executable, "-m", "mmcl.commands.gpu_check", "_chapter", str(path), str(result)]
    rc, output, timed_out = run_child(cmd, cwd=path.parent, env=env, timeout=max(1.0, ck.remaining()))
    ck.log_block(f"chapter {chapter}", output, lines=20)
    entry = json.loads(result.read_text()) if result.exists() else {}
    entry.setdefault("message", "")
    if timed_out:
        entry["status"] = "timeout"
        entry["message"] = (f"stopped when the budget was spent, in cell {entry.get('cell_running', '?')} of "
                            f"{entry.get('cells', '?')} ({entry.get('cells_run', 0)} finished)")
    elif rc != 0 and entry.get("status") != "failed":
        entry["status"] = "failed"
        entry["message"] = entry["message"] or f"exit status {rc}: " + " | ".join(output.strip().splitlines()[-3:])
    return entry


def chapter_cells(path) -> List[str]:
    """The code of every ``{code-cell}`` of a MyST chapter, in order, without its option lines
    (``:tags: ...`` or a ``---`` block)."""
    lines = Path(path).read_text().splitlines()
    cells, k = [], 0
    while k < len(lines):
        if lines[k].strip().startswith("```{code-cell}"):
            k += 1
            body = []
            while k < len(lines) and lines[k].strip() != "```":
                body.append(lines[k])
                k += 1
            if body and body[0].strip() == "---":  # a YAML block of options
                end = next((j for j in range(1, len(body)) if body[j].strip() == "---"), 0)
                body = body[end + 1:]
            while body and re.match(r"^:[\w-]+:", body[0]):
                body = body[1:]
            cells.append("\n".join(body) + "\n")
        k += 1
    return cells


def _ensure_ipython_display() -> None:
    """Chapters import ``IPython.display``; where IPython is missing (the GPU image has none), a
    stand-in whose ``display`` does nothing."""
    try:
        import IPython.display  # noqa: F401
        return
    except ImportError:
        pass
    import types

    class _Shown:
        def __init__(self, data=None, *args, **kwargs):
            self.data = data

    ipy, disp = types.ModuleType("IPython"), types.ModuleType("IPython.display")
    disp.display = lambda *objs, **kwargs: None
    for name in ("HTML", "Markdown", "Latex", "Math", "SVG", "Image", "JSON"):
        setattr(disp, name, type(name, (_Shown,), {}))
    ipy.display = disp
    ipy.get_ipython = lambda: None
    sys.modules["IPython"], sys.modules["IPython.display"] = ipy, disp


def _claims_of(ns: dict) -> list:
    """The claims registers a chapter's namespace holds (``env.claims`` and any other), once each."""
    from mmcl.booksupport import BookEnv
    from mmcl.booksupport.claims import Claims

    found = {}
    for v in list(ns.values()):
        reg = v.claims if isinstance(v, BookEnv) else v if isinstance(v, Claims) else None
        if reg is not None:
            found[id(reg)] = reg
    return [row for reg in found.values() for row in reg.rows]


def chapter_child(md_path: str, result_path: str) -> int:
    """Execute a chapter's cells in one namespace, as a kernel would, writing ``result_path`` (JSON:
    status, cells, cells run, each cell's seconds, the claims and the figures) after every cell."""
    t0 = time.perf_counter()
    path = Path(md_path)
    cells = chapter_cells(path)
    _ensure_ipython_display()
    import matplotlib

    matplotlib.use("Agg")
    state = {"chapter": path.stem, "status": "running", "cells": len(cells), "cells_run": 0, "cell_seconds": [],
             "message": "", "claims": [], "verdicts": {}, "figures": []}
    ns = {"__name__": "__main__"}

    def write():
        rows = _claims_of(ns)
        state["claims"] = [{"claim": r.claim[:300], "paper": r.paper, "verdict": r.verdict, "kind": r.kind,
                            "observed": r.observed, "bound": r.bound, "margin": r.margin} for r in rows]
        verdicts: Dict[str, int] = {}
        for r in rows:
            verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
        state["verdicts"] = verdicts
        figs = Path(os.environ.get("MMCL_FIGURE_DIR") or ".")
        state["figures"] = sorted(p.stem for p in figs.glob("*.png")) if figs.is_dir() else []
        state["seconds"] = time.perf_counter() - t0
        tmp = Path(result_path + ".tmp")
        tmp.write_text(json.dumps(clean_json(state)))
        os.replace(tmp, result_path)

    write()  # the number of cells, before the first one runs
    for k, src in enumerate(cells):
        state["cell_running"] = k + 1
        write()
        t = time.perf_counter()
        try:
            exec(compile(src, f"<{path.stem} cell {k + 1}>", "exec"), ns)
        except BaseException as exc:  # a failed claim (ClaimFailed) or any error stops the chapter
            state["status"] = "failed"
            state["message"] = f"cell {k + 1}: {type(exc).__name__}: {str(exc)[:1000]}"
            traceback.print_exc()
            state["cell_seconds"].append(time.perf_counter() - t)
            write()
            return 1
        finally:
            if "matplotlib.pyplot" in sys.modules:
                sys.modules["matplotlib.pyplot"].close("all")
        state["cell_seconds"].append(time.perf_counter() - t)
        state["cells_run"] = k + 1
        print(f"cell {k + 1}/{len(cells)}: {state['cell_seconds'][-1]:.1f} s", flush=True)
        write()
    state["status"] = "ok"
    state.pop("cell_running", None)
    write()
    return 0
