"""The drawing side of the paper's blueprint (:mod:`mmcl.proofs.blueprint`): where each node sits,
what it says and how it stands.  Shared by the Blueprint page (:mod:`mmcl.booksupport.blueprint_page`)
and the figure for a talk (:func:`draw_blueprint`, registered as ``blueprint``).

* :func:`~mmcl.proofs.blueprint.standing` -- one merged verdict per statement (:data:`~mmcl.proofs.blueprint.STANDINGS`, each one colour of
  :data:`STANDING_COLOR`), from our audit of its proof, what it rests on, the measured verdict and
  the statements of ours that refute it;
* :func:`spine` -- the theorems (the paper's and ours) and the statements their proofs use
  directly, with the edges between them;
* :func:`layout` -- node boxes and edge splines from Graphviz's ``dot`` (premises on the left, the
  theorems on the right), the way a formalisation project's blueprint is laid out;
  :func:`crossings` counts the edges that cross in a layout;
* :func:`short_label` -- the text of a node;
* :func:`draw_blueprint` -- the graph for a slide, each node in its standing's colour with the word.

``dot`` is Graphviz's program (Debian: ``apt-get install graphviz``; ``scripts/build_book.sh``
installs it); it is run as a subprocess, nothing else is needed from Python.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from mmcl.cache import cache_dir
from mmcl.figures import palette
from mmcl.proofs import blueprint as bp
from mmcl.proofs.blueprint import STANDINGS, Statement, standings

__all__ = ["STANDING_COLOR", "spine",
           "Layout", "layout", "crossings", "short_label", "draw_blueprint", "record_verdicts",
           "recorded_verdicts"]

#: One colour per standing: the fill of a node on the page and on a slide (the palette's).
STANDING_COLOR = palette.BLUEPRINT
#: The text colour that reads on each fill.
STANDING_INK = palette.BLUEPRINT_INK
def spine() -> Tuple[List[str], List[Tuple[str, str, str]]]:
    """The graph's spine: the theorems, ours and the paper's, and the statements (no definition)
    that their statements or proofs use directly; ``(keys, edges)`` with an edge ``(a, b, "uses")``
    where ``b`` uses ``a`` through no other node of the spine, and ``(ours, the paper's, relation)``
    for how our statements bear on the paper's (:func:`mmcl.proofs.blueprint.relations`)."""
    tops = [s for s in bp.STATEMENTS if s.kind in ("theorem", "ours")]
    near = {u for s in tops for u in s.uses + s.proof_uses if bp.statement(u).kind != "definition"}
    keys = [s.key for s in bp.STATEMENTS if s in tops or s.key in near]
    anc = {k: bp.ancestors(k) for k in keys}
    edges = []
    for b in keys:
        for a in keys:
            if a in anc[b] and not any(a in anc[c] and c in anc[b] for c in keys if c not in (a, b)):
                edges.append((a, b, "uses"))
    edges += [(a, b, r) for a, b, r in bp.relations() if a in keys and b in keys]
    return keys, edges


def short_label(key: str) -> str:
    """The node's text: ``"Lemma C.10"`` -> ``"C.10"``, ``"Theorem 4.3 (2)"`` -> ``"Thm 4.3 (2)"``,
    ``"Assumption 4.1 (6)"`` -> ``"A4.1 (6)"``, ``"Appendix D.3"`` -> ``"App. D.3"``, ``"Our Theorem 1"``
    -> ``"Our Thm 1"``."""
    for long, short in (("Our Proposition ", "Our Prop. "), ("Our Theorem ", "Our Thm "), ("Lemma ", ""),
                        ("Proposition ", "Prop. "), ("Theorem ", "Thm "), ("Assumption ", "A"),
                        ("Appendix ", "App. "), ("Corollary ", "Cor. ")):
        if key.startswith(long):
            return short + key[len(long):]
    return key


# --------------------------------------------------------------------------------------------
# Layout by Graphviz's dot
# --------------------------------------------------------------------------------------------
Point = Tuple[float, float]


@dataclass(frozen=True)
class Layout:
    """A laid-out graph in pixels at its natural size, ``y`` down: ``width``, ``height``; ``nodes``
    ``{key: (x, y, w, h)}`` (the centre and the size of the box); ``edges`` ``[(src, dst, kind,
    points)]``, ``points`` the control points of the edge's cubic Bezier spline (``1 + 3k`` of them,
    ending where the arrowhead starts); ``labels`` ``{(src, dst): (x, y)}`` for labelled edges."""

    width: float
    height: float
    nodes: Dict[str, Tuple[float, float, float, float]]
    edges: List[Tuple[str, str, str, List[Point]]]
    labels: Dict[Tuple[str, str], Point]

    def polyline(self, points: Sequence[Point], steps: int = 8) -> List[Point]:
        """The spline through ``points`` sampled at ``steps`` points a Bezier piece."""
        out = [points[0]]
        for i in range(0, len(points) - 3, 3):
            p0, p1, p2, p3 = points[i:i + 4]
            for j in range(1, steps + 1):
                t = j / steps
                a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
                out.append((a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0],
                            a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]))
        return out


def _dot_program() -> str:
    path = shutil.which("dot")
    if path is None:
        raise RuntimeError("Graphviz's dot is needed to lay out the blueprint and was not found on PATH; "
                           "install the package graphviz (Debian/Ubuntu: apt-get install graphviz)")
    return path


def _text_width(text: str, font_px: float) -> float:
    """A generous estimate of a sans-serif line's width in pixels (dot is given fixed sizes, so the
    layout does not depend on which fonts Graphviz finds)."""
    return 0.57 * font_px * max(len(line) for line in text.split("\n"))


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def layout(keys: Optional[Sequence[str]] = None, edges: Optional[Iterable[Tuple[str, str, str]]] = None,
           labels: Optional[Mapping[str, str]] = None, font_px: float = 13.0, rankdir: str = "LR",
           ranksep: float = 0.45, nodesep: float = 0.12) -> Layout:
    """Lay the graph out with ``dot -Tplain``: ``keys`` (default: every statement), ``edges``
    (default: :func:`mmcl.proofs.blueprint.edges` and the relations of our statements, which do not
    set the ranks), ``labels`` the text per key (default :func:`short_label`), ``font_px`` the
    size the text is drawn at, ``rankdir`` ``"LR"`` (premises left) or ``"TB"`` (premises on top)."""
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"rankdir={rankdir!r} must be 'LR' or 'TB'")
    if keys is None:
        keys = [s.key for s in bp.STATEMENTS]
        bp.check_blueprint()
    keys = list(keys)
    if edges is None:
        edges = bp.edges() + bp.relations()
    edges = [e for e in edges if e[0] in keys and e[1] in keys]
    labels = {k: (labels or {}).get(k, short_label(k)) for k in keys}
    ids = {k: f"n{i}" for i, k in enumerate(keys)}
    lines = [f"digraph G {{ rankdir={rankdir}; ranksep={ranksep}; nodesep={nodesep}; splines=spline;",
             f'node [shape=box, fixedsize=true, fontsize={font_px}]; edge [arrowsize=0.8];']
    n_lines = {k: labels[k].count("\n") + 1 for k in keys}
    for k in keys:
        w = (_text_width(labels[k], font_px) + 1.2 * font_px) / 72
        h = (n_lines[k] * 1.25 * font_px + 0.8 * font_px) / 72
        lines.append(f"{ids[k]} [label={_quote(labels[k])}, width={w:.3f}, height={h:.3f}];")
    for a, b, kind in edges:  # a relation of ours neither sets the ranks nor takes room for its label
        extra = "" if kind in ("uses", "proof") else ", constraint=false"
        lines.append(f"{ids[a]} -> {ids[b]} [id={_quote(kind)}{extra}];")
    lines.append("}")
    out = subprocess.run([_dot_program(), "-Tplain"], input="\n".join(lines), capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"dot failed ({out.returncode}): {out.stderr.strip()[:500]}")
    back = {v: k for k, v in ids.items()}
    kinds = {(a, b): kind for a, b, kind in edges}
    width = height = 0.0
    nodes, drawn, where = {}, [], {}
    scale = 72.0
    for line in out.stdout.splitlines():
        f = shlex.split(line)
        if not f:
            continue
        if f[0] == "graph":
            width, height = float(f[2]) * scale, float(f[3]) * scale
        elif f[0] == "node":
            x, y, w, h = (float(v) * scale for v in f[2:6])
            nodes[back[f[1]]] = (x, height - y, w, h)
        elif f[0] == "edge":
            a, b, n = back[f[1]], back[f[2]], int(f[3])
            pts = [(float(f[4 + 2 * i]) * scale, height - float(f[5 + 2 * i]) * scale) for i in range(n)]
            drawn.append((a, b, kinds[(a, b)], pts))
    lay = Layout(width, height, nodes, drawn, where)
    for a, b, kind, pts in drawn:  # a relation's word sits at the middle of its spline
        if kind not in ("uses", "proof"):
            line = lay.polyline(pts)
            where[(a, b)] = line[len(line) // 2]
    return lay


def _cross(p: Point, q: Point, r: Point, s: Point) -> bool:
    """Whether the segments pq and rs cross at a point inside both (touching ends do not count)."""
    def orient(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    d1, d2, d3, d4 = orient(r, s, p), orient(r, s, q), orient(p, q, r), orient(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def crossings(edges: Sequence[Tuple[str, str, Sequence[Point]]]) -> int:
    """How many pairs of edges cross, each edge a polyline ``(src, dst, points)``: two edges that
    share an end never count, two that cross more than once count once.  For straight edges give
    the two node centres; for a spline, :meth:`Layout.polyline`."""
    segs = [(a, b, [(pts[i], pts[i + 1]) for i in range(len(pts) - 1)]) for a, b, pts in edges]
    n = 0
    for i in range(len(segs)):
        a, b, si = segs[i]
        for c, d, sj in segs[i + 1:]:
            if {a, b} & {c, d}:
                continue
            if any(_cross(p, q, r, s) for p, q in si for r, s in sj):
                n += 1
    return n


# --------------------------------------------------------------------------------------------
# The measured verdicts the book's last build recorded, and the figure for a talk
# --------------------------------------------------------------------------------------------
def _record_path() -> Path:
    return cache_dir() / "blueprint" / "verdicts.json"


def record_verdicts(verdicts: Mapping[str, str]) -> Path:
    """Keep the measured verdict per statement (``{key: verdict}``) where :func:`recorded_verdicts`
    reads it: the Blueprint page records what the book's chapters measured, so that the figure for a
    talk (``mmcl figure blueprint``) carries the same verdicts."""
    bad = {k: v for k, v in verdicts.items() if v and v not in bp.VERDICTS}
    if bad:
        raise ValueError(f"verdicts {bad} are not measured verdicts; valid: {bp.VERDICTS}")
    path = _record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(sorted(verdicts.items())), indent=1))
    return path


def recorded_verdicts() -> Optional[Dict[str, str]]:
    """The verdicts :func:`record_verdicts` kept at the book's last build, ``None`` if none was."""
    path = _record_path()
    if not path.exists():
        return None
    known = {s.key for s in bp.STATEMENTS}
    return {k: v for k, v in json.loads(path.read_text()).items() if k in known}


def draw_blueprint(verdicts: Optional[Mapping[str, str]] = None):
    """The paper's dependency graph for a slide, laid out by ``dot`` (premises left, theorems right):
    every node filled with the colour of its :func:`~mmcl.proofs.blueprint.standing` (from the measured ``verdicts``,
    ``{key: verdict}``; ``None``: none measured, said in the title) and the standing's word under its
    label, so that no statement reads as holding on colour alone; one edge style, the relations of
    our statements labelled.  Each node's patch carries its key as ``gid``."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Patch

    from mmcl.figures.theme import style

    measured = verdicts is not None
    verdicts = dict(verdicts or {})
    st = standings(verdicts)
    words = {k: f"{short_label(k)}\n{st[k]}" for k in st}
    lay = layout(labels=words, font_px=11.0)
    with style():
        fig, ax = plt.subplots(figsize=(13.33, 7.5))
        for a, b, kind, pts in lay.edges:
            line = lay.polyline(pts)
            ax.plot([p[0] for p in line], [p[1] for p in line], color=palette.GRAPH_EDGE, lw=0.8, zorder=1)
            (x0, y0), (x1, y1) = line[-1], _box_entry(lay.nodes[b], line[-1])
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0), zorder=1,
                        arrowprops=dict(arrowstyle="-|>", color=palette.GRAPH_EDGE, lw=0.8, shrinkA=0, shrinkB=0))
            if (a, b) in lay.labels:
                lx, ly = lay.labels[(a, b)]
                ax.text(lx, ly, kind, ha="center", va="center", fontsize=8, color=palette.GRAPH_TEXT, zorder=3,
                        bbox=dict(fc=palette.BACKGROUND, ec="none", pad=0.5))
        for k, (x, y, w, h) in lay.nodes.items():
            s = st[k]
            rounded = bp.statement(k).kind in ("assumption", "definition")
            box = FancyBboxPatch((x - w / 2, y - h / 2), w, h, zorder=2, gid=k,
                                 boxstyle=f"round,pad=0,rounding_size={h / 2 if rounded else 3}",
                                 fc=STANDING_COLOR[s], ec=palette.GRAPH_MEASURED if verdicts.get(k) else palette.GRAPH_UNMEASURED,
                                 lw=1.6 if verdicts.get(k) else 0.7)
            ax.add_patch(box)
            ax.text(x, y, words[k], ha="center", va="center", fontsize=7, color=STANDING_INK[s],
                    zorder=3, linespacing=1.1)
        ax.set_xlim(0, lay.width)
        ax.set_ylim(lay.height, 0)
        ax.set_aspect("equal")
        ax.axis("off")
        handles = [Patch(fc=STANDING_COLOR[s], ec=palette.GRAPH_UNMEASURED, label=s) for s in STANDINGS]
        handles.append(Patch(fc=palette.BACKGROUND, ec=palette.GRAPH_MEASURED, lw=1.6, label="dark border: measured"))
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles),
                  frameon=False, fontsize=9)
        ax.set_title("The paper's statements, premises (left) to theorems (right)"
                     + ("" if measured else "\n(the proof audit only: no measured verdicts recorded)"))
    return fig


def _box_entry(box, start: Point) -> Point:
    """Where a straight line from ``start`` to the centre of ``box`` meets the box's side."""
    x, y, w, h = box
    dx, dy = x - start[0], y - start[1]
    if dx == 0 and dy == 0:
        return start
    t = min(abs((w / 2) / dx) if dx else 1e9, abs((h / 2) / dy) if dy else 1e9)
    return (x - dx * t, y - dy * t)
