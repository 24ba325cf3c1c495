"""The book's Blueprint page: the paper's dependency graph as SVG and one line per statement.

:func:`render_svg` draws :data:`mmcl.proofs.blueprint.STATEMENTS` in the layers of
:func:`mmcl.proofs.blueprint.layout` (premises on the left, the theorems on the right): the shape
says the kind, the fill the proof audit, the border the measured verdict (from the claims
register's rows), solid edges what a statement uses and dotted edges what only its proof uses;
every node links to the section of the book that discusses it.  :func:`render_table` gives the line
per statement.  :func:`render_page` is both, which the Sphinx extension
(:mod:`mmcl.booksupport.sphinx_ext`) puts where ``book/blueprint.md`` says ``{mmcl-blueprint}``.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import html
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from mmcl.figures.theme import AUDIT_FILL, VERDICT_STROKE
from mmcl.proofs import blueprint as bp
from mmcl.proofs.blueprint import short_label

__all__ = ["measured", "render_svg", "render_table", "render_legend",
           "render_page"]

_W, _H, _DX, _DY, _PAD = 74.0, 24.0, 96.0, 32.0, 14.0


def measured(rows: Iterable[Mapping]) -> Dict[str, Dict[str, int]]:
    """``{statement key: Counter of verdicts}`` from the register's rows (dicts with ``paper``,
    ``verdict`` and ``source``): a row counts for every statement its ``paper=`` resolves to."""
    out: Dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        if r.get("source", "huang2024comparison") != "huang2024comparison":
            continue
        for s in bp.resolve(r["paper"]):
            out[s.key][r["verdict"]] += 1
    return {k: dict(v) for k, v in out.items()}


def _shape(kind: str, x: float, y: float, fill: str, stroke: str, width: float, dash: str) -> str:
    st = f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"' + (f' stroke-dasharray="{dash}"' if dash else "")
    w, h = _W / 2, _H / 2
    if kind == "theorem":
        return f'<rect x="{x - w}" y="{y - h}" width="{_W}" height="{_H}" rx="{h}" {st}/>'
    if kind == "assumption":  # a hexagon
        pts = [(x - w, y), (x - w + 8, y - h), (x + w - 8, y - h), (x + w, y), (x + w - 8, y + h), (x - w + 8, y + h)]
        return '<polygon points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + f'" {st}/>'
    if kind == "definition":
        return f'<ellipse cx="{x}" cy="{y}" rx="{w}" ry="{h}" {st}/>'
    if kind == "step":  # a parallelogram
        pts = [(x - w + 6, y - h), (x + w, y - h), (x + w - 6, y + h), (x - w, y + h)]
        return '<polygon points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + f'" {st}/>'
    rx = 2 if kind == "lemma" else 7  # proposition: rounder corners
    return f'<rect x="{x - w}" y="{y - h}" width="{_W}" height="{_H}" rx="{rx}" {st}/>'


def render_svg(statements: Sequence[bp.Statement] = None, verdicts: Optional[Mapping[str, str]] = None,
               links: Optional[Mapping[str, str]] = None) -> str:
    """The dependency graph as an SVG element.  ``verdicts``: the measured verdict per statement key
    (:func:`mmcl.proofs.blueprint.measured_verdict`; missing = none); ``links``: a URL per key (the
    section that discusses it).  Each node carries a tooltip (its summary and audit)."""
    sts = list(bp.STATEMENTS if statements is None else statements)
    pos = bp.layout(sts)
    verdicts, links = dict(verdicts or {}), dict(links or {})
    by = {s.key: s for s in sts}
    n_layers = 1 + max((p[0] for p in pos.values()), default=0)
    tallest = 1 + max((p[1] for p in pos.values()), default=0)
    xy = {k: (_PAD + _W / 2 + layer * _DX, _PAD + _H / 2 + i * _DY) for k, (layer, i) in pos.items()}
    width = 2 * _PAD + _W + (n_layers - 1) * _DX
    height = 2 * _PAD + _H + (tallest - 1) * _DY
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mmcl-blueprint-graph" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="100%" role="img" aria-label="dependency graph of the paper\'s statements" '
           f'font-family="sans-serif" font-size="10.5">',
           '<defs><marker id="mmcl-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker></defs>']
    for src, dst, kind in bp.edges() if statements is None else _edges(sts):
        if src not in xy or dst not in xy:
            continue
        (x0, y0), (x1, y1) = xy[src], xy[dst]
        x0, x1 = x0 + _W / 2, x1 - _W / 2
        mid = (x0 + x1) / 2
        dash = ' stroke-dasharray="2,3"' if kind == "proof" else ""
        out.append(f'<path d="M{x0:.1f},{y0:.1f} C{mid:.1f},{y0:.1f} {mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f}" fill="none" '
                   f'stroke="#999" stroke-width="0.9"{dash} marker-end="url(#mmcl-arrow)"/>')
    for k, (x, y) in xy.items():
        s = by[k]
        v = verdicts.get(k, "")
        stroke, sw, dash = VERDICT_STROKE[v]
        tip = (f"{s.key}: {s.summary}\nproof: {bp.AUDIT_TEXT[s.audit.status]}"
               + (f" ({s.audit.step}: {s.audit.reason})" if s.audit.reason else "")
               + (f"\nmeasured: {bp.VERDICT_TEXT[v]}" if v else "\nmeasured: no verdict"))
        node = [f'<g class="mmcl-node" data-key="{html.escape(k, quote=True)}" data-audit="{s.audit.status}" '
                f'data-verdict="{v}"><title>{html.escape(tip)}</title>',
                _shape(s.kind, x, y, AUDIT_FILL[s.audit.status], stroke, sw, dash),
                f'<text x="{x}" y="{y + 3.8}" text-anchor="middle" fill="#111">{html.escape(short_label(k))}</text></g>']
        href = links.get(k)
        if href:
            node = [f'<a href="{html.escape(href, quote=True)}">'] + node + ["</a>"]
        out.extend(node)
    out.append("</svg>")
    return "\n".join(out)


def _edges(sts):
    out = []
    for s in sts:
        out += [(u, s.key, "uses") for u in s.uses]
        out += [(u, s.key, "proof") for u in s.proof_uses if u not in s.uses]
    return out


def render_legend() -> str:
    """The key to the graph's fills, borders and edges, as HTML."""
    fills = " ".join(f"<span class='mmcl-swatch' style='background:{c}'></span>{bp.AUDIT_TEXT[a]}"
                     for a, c in AUDIT_FILL.items())
    borders = " ".join(f"<span class='mmcl-swatch' style='border:3px {'dashed' if d else 'solid'} {c}'></span>"
                       f"{bp.VERDICT_TEXT[v] if v else 'no measured verdict'}"
                       for v, (c, _, d) in VERDICT_STROKE.items())
    return (f"<p class='mmcl-blueprint-legend'><b>Fill, the proof:</b> {fills}<br><b>Border, the measurement:</b> "
            f"{borders}<br><b>Shape:</b> rectangle lemma, rounded proposition, pill theorem, hexagon assumption, "
            f"parallelogram proof step, ellipse definition. <b>Edges:</b> solid, the statement uses it; dotted, "
            f"only the proof does.</p>")


def render_table(counts: Mapping[str, Mapping[str, int]], links: Optional[Mapping[str, str]] = None,
                 claims_links: Optional[Mapping[str, str]] = None, statements: Sequence[bp.Statement] = None) -> str:
    """One line per statement: the proof audit (with the step and the reason where there is a gap),
    the measured verdict inside the premises (rows that hold / fail where every premise holds),
    beyond them (rows that hold / are not borne out where one fails), and a link to its rows on the
    Claims page.  ``counts``: :func:`measured`."""
    sts = list(bp.STATEMENTS if statements is None else statements)
    links, claims_links = dict(links or {}), dict(claims_links or {})
    out = ["<table class='mmcl-blueprint-table table'><thead><tr><th>statement</th><th>proof</th>"
           "<th>inside its premises</th><th>beyond them</th><th>rows</th></tr></thead><tbody>"]
    for s in sts:
        c = counts.get(s.key, {})
        name = html.escape(s.key)
        if s.key in links:
            name = f"<a class='reference internal' href='{html.escape(links[s.key], quote=True)}'>{name}</a>"
        audit = f"<span class='mmcl-audit mmcl-audit-{s.audit.status}'>{bp.AUDIT_TEXT[s.audit.status]}</span>"
        if s.audit.reason:
            audit += f"<br><small>{html.escape(s.audit.step)}: {html.escape(s.audit.reason)}</small>"
        if s.audit.route:
            audit += f"<br><small><i>other route:</i> {html.escape(s.audit.route)}</small>"
        inside = _count_text(c, ("holds", "fails"))
        beyond = _count_text(c, ("beyond", "outside"))
        n = sum(c.values())
        rows = (f"<a class='reference internal' href='{html.escape(claims_links[s.key], quote=True)}'>{n}</a>"
                if n and s.key in claims_links else str(n))
        out.append(f"<tr><td>{name}<br><small>{html.escape(s.summary)}</small></td><td>{audit}</td>"
                   f"<td>{inside}</td><td>{beyond}</td><td>{rows}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _count_text(c: Mapping[str, int], keys) -> str:
    parts = [f"<span class='mmcl-verdict mmcl-{k}'>{c[k]} {bp.VERDICT_TEXT[k]}</span>" for k in keys if c.get(k)]
    return "<br>".join(parts) if parts else "&ndash;"


def render_page(rows: Iterable[Mapping], links: Optional[Mapping[str, str]] = None,
                claims_links: Optional[Mapping[str, str]] = None) -> str:
    """The summary line, the legend, the graph and the table, from the register's rows."""
    counts = measured(list(rows))
    verdicts = {k: bp.measured_verdict(c) for k, c in counts.items()}
    sts = bp.STATEMENTS
    audits = Counter(s.audit.status for s in sts)
    v = Counter(verdicts.get(s.key, "") for s in sts)
    summary = (f"<p class='mmcl-blueprint-summary'>{len(sts)} statements, {len(bp.edges())} edges. Proofs: "
               + ", ".join(f"<b>{audits.get(a, 0)}</b> {bp.AUDIT_TEXT[a]}" for a in bp.AUDITS)
               + ". Measured: " + ", ".join(f"<b>{v.get(k, 0)}</b> {bp.VERDICT_TEXT[k]}"
                                             for k in ("holds", "beyond", "fails", "outside"))
               + f", <b>{v.get('', 0)}</b> without a verdict.</p>")
    return (summary + render_legend() + "<div class='mmcl-blueprint'>" + render_svg(None, verdicts, links) + "</div>"
            + render_table(counts, links, claims_links))
