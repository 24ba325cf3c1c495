"""The book's Blueprint page: the paper's dependency graph as SVG and one line per statement.

:func:`render_svg` draws :data:`mmcl.proofs.statements.STATEMENTS` in the layers of
:func:`mmcl.figures.blueprint_graph.layout` (premises on the left, the theorems on the right): the shape
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
from mmcl.figures.blueprint_graph import layout, short_label

__all__ = ["measured", "decisive", "render_svg", "render_table", "render_legend",
           "render_page"]

_W, _H, _DX, _DY, _PAD = 70.0, 24.0, 86.0, 31.0, 12.0


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


#: The stroke of a relation of one of our statements to the paper's (:func:`mmcl.proofs.blueprint.relations`).
RELATION_STROKE = {"refutes": "#b2182b", "repairs": "#1b7837"}


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
    if kind == "ours":  # the book's own statements: a double border
        inner = f'fill="none" stroke="{stroke}" stroke-width="0.8"'
        return (f'<rect x="{x - w}" y="{y - h}" width="{_W}" height="{_H}" rx="7" {st}/>'
                f'<rect x="{x - w + 3}" y="{y - h + 3}" width="{_W - 6}" height="{_H - 6}" rx="5" {inner}/>')
    rx = 2 if kind == "lemma" else 7  # proposition: rounder corners
    return f'<rect x="{x - w}" y="{y - h}" width="{_W}" height="{_H}" rx="{rx}" {st}/>'


def render_svg(statements: Sequence[bp.Statement] = None, verdicts: Optional[Mapping[str, str]] = None,
               links: Optional[Mapping[str, str]] = None) -> str:
    """The dependency graph as an SVG element.  ``verdicts``: the measured verdict per statement key
    (:func:`mmcl.proofs.blueprint.measured_verdict`; missing = none); ``links``: a URL per key (the
    section that discusses it).  Each node carries a tooltip (its summary and audit).  Statements
    with no edge (the items of Assumption 4.1, which proofs use through their explicit conditions)
    stand in a row below the graph."""
    sts = list(bp.STATEMENTS if statements is None else statements)
    verdicts, links = dict(verdicts or {}), dict(links or {})
    by = {s.key: s for s in sts}
    edge_list = [e for e in (bp.edges() if statements is None else _edges(sts)) if e[0] in by and e[1] in by]
    linked = {k for e in edge_list for k in e[:2]}
    graph = [s for s in sts if s.key in linked]
    alone = [s for s in sts if s.key not in linked]
    pos = layout(graph) if graph else {}
    n_layers = 1 + max((p[0] for p in pos.values()), default=0)
    tallest = 1 + max((p[1] for p in pos.values()), default=-1)
    xy = {k: (_PAD + _W / 2 + layer * _DX, _PAD + _H / 2 + i * _DY) for k, (layer, i) in pos.items()}
    per_row = max(1, n_layers)
    top = _PAD + tallest * _DY + (_DY if graph and alone else 0)
    for j, s in enumerate(alone):
        xy[s.key] = (_PAD + _W / 2 + (j % per_row) * _DX, top + _H / 2 + (j // per_row) * _DY)
    width = 2 * _PAD + _W + (n_layers - 1) * _DX
    height = max(y for _, y in xy.values()) + _H / 2 + _PAD if xy else 2 * _PAD
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="mmcl-blueprint-graph" viewBox="0 0 {width:.0f} {height:.0f}" '
           f'width="100%" role="img" aria-label="dependency graph of the paper\'s statements" '
           f'font-family="sans-serif" font-size="11">',
           '<defs><marker id="mmcl-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="6" markerHeight="6" '
           'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#777"/></marker>'
           f'<pattern id="mmcl-rests" patternUnits="userSpaceOnUse" width="7" height="7" patternTransform="rotate(45)">'
           f'<rect width="7" height="7" fill="{AUDIT_FILL["valid"]}"/><rect width="3" height="7" '
           f'fill="{AUDIT_FILL["gap-inside"]}"/></pattern></defs>']
    for src, dst, kind in edge_list:
        (x0, y0), (x1, y1) = xy[src], xy[dst]
        x0, x1 = x0 + _W / 2, x1 - _W / 2
        mid = (x0 + x1) / 2
        dash = ' stroke-dasharray="2,3"' if kind == "proof" else ""
        out.append(f'<path d="M{x0:.1f},{y0:.1f} C{mid:.1f},{y0:.1f} {mid:.1f},{y1:.1f} {x1:.1f},{y1:.1f}" fill="none" '
                   f'stroke="#999" stroke-width="0.9"{dash} marker-end="url(#mmcl-arrow)"/>')
    for src, dst, rel in (bp.relations() if statements is None else []):  # ours -> the paper's
        if src not in xy or dst not in xy:
            continue
        (x0, y0), (x1, y1) = xy[src], xy[dst]
        color = RELATION_STROKE[rel]
        out.append(f'<path class="mmcl-relation" data-relation="{rel}" d="M{x0:.1f},{y0 - _H / 2:.1f} '
                   f'Q{(x0 + x1) / 2:.1f},{min(y0, y1) - 2 * _H:.1f} {x1:.1f},{y1 - _H / 2:.1f}" fill="none" '
                   f'stroke="{color}" stroke-width="1.4" stroke-dasharray="6,3"><title>{html.escape(src)} {rel} '
                   f'{html.escape(dst)}</title></path>')
    for s in graph + alone:
        k = s.key
        x, y = xy[k]
        v = verdicts.get(k, "")
        stroke, sw, dash = VERDICT_STROKE[v]
        gaps = bp.rests_on(k) if statements is None else ()
        tip = (f"{s.key}: {s.summary}\nproof: {_audit_text(s)}"
               + (f" ({s.audit.step}: {s.audit.reason})" if s.audit.step else "")
               + (f"\nrests on gaps in: {', '.join(gaps)}" if gaps else "")
               + (f"\nmeasured: {bp.VERDICT_TEXT[v]}" if v else "\nmeasured: no verdict"))
        node = [f'<g class="mmcl-node" data-key="{html.escape(k, quote=True)}" data-audit="{s.audit.status}" '
                f'data-verdict="{v}"><title>{html.escape(tip)}</title>',
                _shape(s.kind, x, y, "url(#mmcl-rests)" if gaps and s.audit.status == "valid" else _fill(s),
                       stroke, sw, dash),
                f'<text x="{x}" y="{y + 4}" text-anchor="middle" fill="#111">{html.escape(short_label(k))}</text></g>']
        href = links.get(k)
        if href:
            node = [f'<a href="{html.escape(href, quote=True)}">'] + node + ["</a>"]
        out.extend(node)
    out.append("</svg>")
    return "\n".join(out)


def _fill(s: bp.Statement) -> str:
    """A premise or a definition has no proof to audit: white."""
    return "#ffffff" if s.kind in ("assumption", "definition") else AUDIT_FILL[s.audit.status]


def _audit_text(s: bp.Statement) -> str:
    if s.kind == "assumption":
        return "a premise"
    if s.kind == "definition":
        return "a definition"
    return bp.AUDIT_TEXT[s.audit.status]


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
    fills += (f" <span class='mmcl-swatch' style='background: repeating-linear-gradient(45deg, "
              f"{AUDIT_FILL['gap-inside']} 0 3px, {AUDIT_FILL['valid']} 3px 7px)'></span>valid as written, but rests "
              f"on a gap further back")
    borders = " ".join(f"<span class='mmcl-swatch' style='border:3px {'dashed' if d else 'solid'} {c}'></span>"
                       f"{bp.VERDICT_TEXT[v] if v else 'no measured verdict'}"
                       for v, (c, _, d) in VERDICT_STROKE.items())
    return (f"<p class='mmcl-blueprint-legend'><b>Fill, the proof:</b> {fills}<br><b>Border, the measurement:</b> "
            f"{borders}<br><b>Shape:</b> rectangle lemma, rounded proposition, pill theorem, hexagon assumption, "
            f"parallelogram proof step, ellipse definition. <b>Edges:</b> solid, the statement uses it; dotted, "
            f"only the proof does.</p>")


def decisive(rows: Iterable[Mapping]) -> Dict[str, Mapping]:
    """:func:`mmcl.proofs.blueprint.deciding_rows`: for each statement the row that decides its
    measured verdict, in the one order of :data:`mmcl.proofs.blueprint.VERDICT_ORDER`."""
    return bp.deciding_rows(rows)


def _importance(s: bp.Statement) -> tuple:
    """Theorems first, then the proof steps and lemmas with a gap, the other lemmas, the premises."""
    kind = {"ours": 0, "theorem": 0, "step": 1, "lemma": 2, "proposition": 2, "assumption": 4, "definition": 5}[s.kind]
    if kind == 2 and s.audit.status not in ("gap-inside", "gap-outside"):
        kind = 3
    return (kind, bp.AUDITS.index(s.audit.status))


def render_table(counts: Mapping[str, Mapping[str, int]], links: Optional[Mapping[str, str]] = None,
                 claims_links: Optional[Mapping[str, str]] = None, statements: Sequence[bp.Statement] = None,
                 evidence: Optional[Mapping[str, Mapping]] = None) -> str:
    """One line per statement, the theorems first, then the statements with a gap: the proof audit
    (with the step and the reason where there is a gap, and the gaps it rests on), the rows that
    judge it inside its premises (hold / fail where every premise holds, or every one that a
    computation can reach) and beyond them (hold / not borne out where another fails), the decisive row (``evidence``: :func:`decisive`, each row with an
    ``href``) and a link to all its rows on the Claims page.  ``counts``: :func:`measured`."""
    sts = sorted(bp.STATEMENTS if statements is None else statements, key=_importance)
    links, claims_links, evidence = dict(links or {}), dict(claims_links or {}), dict(evidence or {})
    out = ["<table class='mmcl-blueprint-table table'><thead><tr><th>statement</th><th>proof</th>"
           "<th>inside its premises</th><th>beyond them</th><th>decisive evidence</th></tr></thead><tbody>"]
    for s in sts:
        c = counts.get(s.key, {})
        name = html.escape(s.key)
        if s.key in links:
            name = f"<a class='reference internal' href='{html.escape(links[s.key], quote=True)}'>{name}</a>"
        cls = s.audit.status if s.kind not in ("assumption", "definition") else "not-audited"
        audit = f"<span class='mmcl-audit mmcl-audit-{cls}'>{_audit_text(s)}</span>"
        if s.audit.reason:
            audit += f"<br><small>{html.escape(s.audit.step + ': ' if s.audit.step else '')}{html.escape(s.audit.reason)}</small>"
        if s.audit.route:
            audit += f"<br><small><i>other route:</i> {html.escape(s.audit.route)}</small>"
        gaps = bp.rests_on(s.key) if statements is None else ()
        if gaps:
            audit += f"<br><small><i>rests on gaps in:</i> {html.escape(', '.join(gaps))}</small>"
        inside = _count_text(c, ("holds", "fails", "reach-holds", "reach-fails"))
        beyond = _count_text(c, ("beyond", "outside"))
        n = sum(c.values())
        ev = evidence.get(s.key)
        cell = "&ndash;"
        if ev is not None:
            text = html.escape(ev["claim"])
            if ev.get("href"):
                text = f"<a class='reference internal' href='{html.escape(ev['href'], quote=True)}'>{text}</a>"
            cell = f"<span class='mmcl-verdict mmcl-{ev['verdict']}'>{bp.VERDICT_TEXT[ev['verdict']]}</span>: {text}"
        if n and s.key in claims_links:
            cell += (f"<br><small><a class='reference internal' href='{html.escape(claims_links[s.key], quote=True)}'>"
                     f"all {n} rows</a></small>")
        out.append(f"<tr><td>{name}<br><small>{html.escape(s.summary)}</small></td><td>{audit}</td>"
                   f"<td>{inside}</td><td>{beyond}</td><td>{cell}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _count_text(c: Mapping[str, int], keys) -> str:
    parts = [f"<span class='mmcl-verdict mmcl-{k}'>{c[k]} {bp.VERDICT_TEXT[k]}</span>" for k in keys if c.get(k)]
    return "<br>".join(parts) if parts else "&ndash;"


def render_page(rows: Iterable[Mapping], links: Optional[Mapping[str, str]] = None,
                claims_links: Optional[Mapping[str, str]] = None) -> str:
    """The summary line, the legend, the graph and the table, from the register's rows (each may
    carry an ``href`` to where it is checked, used for the decisive evidence)."""
    rows = list(rows)
    counts = measured(rows)
    verdicts = {k: bp.measured_verdict(c) for k, c in counts.items()}
    sts = bp.STATEMENTS
    paper = [s for s in sts if s.kind not in ("assumption", "definition", "ours")]
    st = bp.audit_summary()
    far = set(st["no-theorem"])
    v = Counter(verdicts.get(s.key, "") for s in sts if s.kind != "ours")
    ours = [s for s in sts if s.kind == "ours"]
    rel = "; ".join(f"{html.escape(a)} {r} {html.escape(b)}" for a, b, r in bp.relations())
    summary = (f"<p class='mmcl-blueprint-summary'><b>What stands.</b> Of the paper's {len(paper)} proofs, "
               f"<b>{len(st['root'])}</b> fail at a step of their own inside the premises (the errors "
               f"themselves; {len(far & set(st['root']))} of them reach no theorem), <b>{len(st['inherited'])}</b> "
               f"are valid but rest on one of those, <b>{len(st['outside'])}</b> needs more only where a premise "
               f"fails, <b>{len(st['valid'])}</b> are valid and rest on nothing with a gap, and "
               f"<b>{len(st['not-audited'])}</b> are not audited. Measured: "
               + ", ".join(f"<b>{v.get(k, 0)}</b> {bp.VERDICT_TEXT[k]}" for k in bp.VERDICT_ORDER)
               + f", <b>{v.get('', 0)}</b> without a verdict. Ours ({len(ours)} statements, double border): {rel}.</p>")
    return (summary + render_legend() + "<div class='mmcl-blueprint'>" + render_svg(None, verdicts, links) + "</div>"
            + render_table(counts, links, claims_links, evidence=decisive(rows)))
