"""The book's Blueprint page: one sentence on what stands, the spine, the whole dependency graph,
and one line per statement.

Every node carries one merged verdict, its standing (:func:`mmcl.proofs.blueprint.standing`:
our audit of its proof, what it rests on, the verdict the claims register's rows give it, and the
statements of ours that refute it), drawn as one fill per standing.  :func:`summary_sentence` says
which theorems stand; :func:`render_spine` draws the theorems and what their proofs use directly,
each with its standing in words; :func:`render_svg` draws the whole graph at its natural size, laid
out by Graphviz's ``dot`` (premises on the left, the theorems on the right), every node linked to
the section of the book that discusses it; :func:`render_table` gives the line per statement.
:func:`render_page` is all of them, which the Sphinx extension (:mod:`mmcl.booksupport.sphinx_ext`)
puts where ``book/blueprint.md`` says ``{mmcl-blueprint}``; :func:`write_figure` records the
verdicts and writes the figure for a talk with them.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import html
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from mmcl.figures import palette
from mmcl.figures.blueprint_graph import STANDING_COLOR, STANDING_INK, Layout, layout, short_label, spine
from mmcl.proofs.blueprint import STANDING_TEXT, STANDINGS, standing
from mmcl.proofs import blueprint as bp

__all__ = ["measured", "decisive", "verdicts_of", "summary_sentence", "render_spine", "render_svg",
           "render_table", "render_legend", "render_page", "write_figure"]


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


def _escape(s: str) -> str:
    return html.escape(s, quote=True)


#: The one edge colour, the dark border of a measured statement, and what an edge says in its tooltip.
EDGE_COLOR = palette.GRAPH_EDGE
MEASURED_STROKE = palette.GRAPH_MEASURED
EDGE_TEXT = {"uses": "is used by the statement", "proof": "is used by the proof of"}
#: The size of the labels, in pixels at the graph's natural size: the whole graph, the spine.
FONT_PX, SPINE_PX = 13.0, 13.0


def _node_shape(kind: str, x: float, y: float, w: float, h: float, fill: str, stroke: str, width: float) -> str:
    """Two shapes: a box for a statement with a proof, a rounded one for a premise or a definition."""
    rx = h / 2 if kind in ("assumption", "definition") else 3
    return (f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx:.1f}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"/>')


def _svg_graph(lay: Layout, cls: str, label: str, marker: str, nodes: Sequence[str], body) -> List[str]:
    pad = 2  # room for the borders of the outermost boxes
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" viewBox="{-pad} {-pad} {lay.width + 2 * pad:.0f} '
           f'{lay.height + 2 * pad:.0f}" width="{lay.width + 2 * pad:.0f}" height="{lay.height + 2 * pad:.0f}" '
           f'role="img" aria-label="{_escape(label)}" font-family="sans-serif">',
           f'<defs><marker id="{marker}" viewBox="0 0 10 8" refX="0" refY="4" markerWidth="8" markerHeight="6.4" '
           f'markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,4 L0,8 z" fill="{EDGE_COLOR}"/>'
           f'</marker></defs>']
    words = []
    for a, b, kind, pts in lay.edges:
        d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f} C" + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts[1:])
        out.append(f'<path class="mmcl-edge" data-kind="{kind}" d="{d}" fill="none" stroke="{EDGE_COLOR}" '
                   f'stroke-width="1" marker-end="url(#{marker})"><title>{_escape(a)} '
                   f'{EDGE_TEXT.get(kind, kind)} {_escape(b)}</title></path>')
        if (a, b) in lay.labels:  # drawn over the nodes, on a white halo
            x, y = lay.labels[(a, b)]
            words.append(f'<text class="mmcl-edge-label" x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" '
                         f'font-size="12" fill="#333" stroke="#fff" stroke-width="3" paint-order="stroke">'
                         f'{_escape(kind)}</text>')
    for k in nodes:
        out.extend(body(k, *lay.nodes[k]))
    out.extend(words)
    out.append("</svg>")
    return out


def render_svg(statements: Sequence[bp.Statement] = None, verdicts: Optional[Mapping[str, str]] = None,
               links: Optional[Mapping[str, str]] = None) -> str:
    """The whole dependency graph as an SVG element at its natural size (the page scrolls it
    sideways), laid out by Graphviz's ``dot`` (:func:`mmcl.figures.blueprint_graph.layout`): every
    node filled by its :func:`~mmcl.proofs.blueprint.standing` (the one merged verdict), a
    dark border where a check measured it, a rounded box for a premise or a definition; one edge
    style, from a statement to those that use it, and labelled edges from our statements to the
    paper's they refute or repair.  ``verdicts``: the measured verdict per statement key
    (:func:`mmcl.proofs.blueprint.measured_verdict`; missing = none); ``links``: a URL per key (the
    section that discusses it).  Each node carries a tooltip (its summary, audit and verdict)."""
    sts = list(bp.STATEMENTS if statements is None else statements)
    verdicts, links = dict(verdicts or {}), dict(links or {})
    edges = bp.edges() + bp.relations() if statements is None else _edges(sts)
    lay = layout([s.key for s in sts], edges, font_px=FONT_PX)
    by = {s.key: s for s in sts}

    def body(k, x, y, w, h):
        s, v = by[k], verdicts.get(k, "")
        st = standing(k, v)
        gaps = bp.rests_on(k) if statements is None else ()
        tip = (f"{s.key}: {s.summary}\nstanding: {st}\nproof: {_audit_text(s)}"
               + (f" ({s.audit.step}: {s.audit.reason})" if s.audit.step else "")
               + (f"\nrests on gaps in: {', '.join(gaps)}" if gaps else "")
               + (f"\nmeasured: {bp.VERDICT_TEXT[v]}" if v else "\nmeasured: no verdict"))
        node = [f'<g class="mmcl-node" data-key="{_escape(k)}" data-audit="{s.audit.status}" data-verdict="{v}" '
                f'data-standing="{st}"><title>{html.escape(tip)}</title>',
                _node_shape(s.kind, x, y, w, h, STANDING_COLOR[st], MEASURED_STROKE if v else palette.GRAPH_UNMEASURED,
                            2 if v else 1),
                f'<text x="{x:.1f}" y="{y + FONT_PX * 0.35:.1f}" text-anchor="middle" font-size="{FONT_PX:g}" '
                f'fill="{STANDING_INK[st]}">{html.escape(short_label(k))}</text></g>']
        href = links.get(k)
        return [f'<a href="{_escape(href)}">'] + node + ["</a>"] if href else node

    return "\n".join(_svg_graph(lay, "mmcl-blueprint-graph", "dependency graph of the paper's statements",
                                "mmcl-arrow", [s.key for s in sts], body))


def render_spine(verdicts: Optional[Mapping[str, str]] = None, links: Optional[Mapping[str, str]] = None) -> str:
    """The spine (:func:`mmcl.figures.blueprint_graph.spine`: the theorems, ours, and what their
    proofs use directly) as an SVG at its natural size, top to bottom, each node with its name and
    its standing in words, in the standing's colour."""
    verdicts, links = dict(verdicts or {}), dict(links or {})
    keys, edges = spine()
    st = {k: standing(k, verdicts.get(k, "")) for k in keys}
    lay = layout(keys, edges, labels={k: f"{k}\n{st[k]}" for k in keys}, font_px=SPINE_PX, rankdir="TB",
                 ranksep=0.3, nodesep=0.06)

    def body(k, x, y, w, h):
        ink = STANDING_INK[st[k]]
        node = [f'<g class="mmcl-spine-node" data-key="{_escape(k)}" data-standing="{st[k]}">'
                f'<title>{html.escape(k + ": " + bp.statement(k).summary)}</title>',
                _node_shape(bp.statement(k).kind, x, y, w, h, STANDING_COLOR[st[k]], "#555555", 1),
                f'<text x="{x:.1f}" y="{y - 3:.1f}" text-anchor="middle" font-size="{SPINE_PX:g}" '
                f'font-weight="bold" fill="{ink}">{html.escape(k)}</text>',
                f'<text x="{x:.1f}" y="{y + SPINE_PX:.1f}" text-anchor="middle" font-size="{SPINE_PX:g}" '
                f'fill="{ink}">{html.escape(st[k])}</text></g>']
        href = links.get(k)
        return [f'<a href="{_escape(href)}">'] + node + ["</a>"] if href else node

    return "\n".join(_svg_graph(lay, "mmcl-blueprint-spine", "the theorems and what their proofs use directly",
                                "mmcl-arrow-spine", keys, body))


def summary_sentence(verdicts: Mapping[str, str]) -> str:
    """The one sentence that says which theorems (the paper's and ours) stand and which do not, and
    how many of the paper's proofs have a gap of their own, from the standings."""
    tops = [s.key for s in bp.STATEMENTS if s.kind in ("theorem", "ours")]
    st = {k: standing(k, verdicts.get(k, "")) for k in tops}
    verbs = {"stands": ("stands", "stand"), "refuted": ("is refuted", "are refuted"),
             "gap": ("has a gap of its own", "have a gap of their own"),
             "rests on a gap": ("rests on a gap", "rest on a gap"),
             "not audited": ("is not audited", "are not audited")}
    parts = []
    for word in STANDINGS:
        ks = [k for k in tops if st[k] == word]
        if ks:
            names = ks[0] if len(ks) == 1 else ", ".join(ks[:-1]) + " and " + ks[-1]
            parts.append(f"<span class='mmcl-standing' style='background:{STANDING_COLOR[word]};"
                         f"color:{STANDING_INK[word]}'>{html.escape(names)} {verbs[word][len(ks) > 1]}</span>")
    paper = [s for s in bp.STATEMENTS if s.kind not in ("assumption", "definition", "ours")]
    own = [s for s in paper if s.audit.status in ("gap-inside", "gap-outside")]
    refuted = [s for s in paper if verdicts.get(s.key, "") in ("fails", "reach-fails")]
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return (f"<p class='mmcl-blueprint-summary'><b>What stands.</b> Of the {len(tops)} theorems, the paper's and "
            f"ours, {text}; below them, {len(own)} of the paper's {len(paper)} proofs "
            f"{'has' if len(own) == 1 else 'have'} a gap of {'its' if len(own) == 1 else 'their'} own and the "
            f"checks refute {len(refuted)} statement{'' if len(refuted) == 1 else 's'} where "
            f"{'its' if len(refuted) == 1 else 'their'} premises hold.</p>")


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
    """The key to the graph: one fill per standing, one border meaning, two shapes, one edge style."""
    fills = " ".join(f"<span class='mmcl-swatch' style='background:{STANDING_COLOR[k]}'></span><b>{k}</b>: "
                     f"{STANDING_TEXT[k]};" for k in STANDINGS)
    return (f"<p class='mmcl-blueprint-legend'><b>Fill, the standing:</b> {fills}<br><b>Border:</b> "
            f"<span class='mmcl-swatch' style='border:2px solid {MEASURED_STROKE}'></span>dark where a check "
            f"measured the statement (its rows are on the Claims page). <b>Shape:</b> rounded ends for a premise "
            f"or a definition, a box for a statement with a proof. <b>Arrows:</b> from a statement to those "
            f"whose statement or proof uses it; labelled, from our statements to the paper's they refute or "
            f"repair.</p>")


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


def verdicts_of(rows: Iterable[Mapping]) -> Dict[str, str]:
    """The measured verdict per statement key (:func:`mmcl.proofs.blueprint.measured_verdict` of
    :func:`measured`), from the register's rows."""
    return {k: bp.measured_verdict(c) for k, c in measured(rows).items()}


def render_page(rows: Iterable[Mapping], links: Optional[Mapping[str, str]] = None,
                claims_links: Optional[Mapping[str, str]] = None) -> str:
    """From the register's rows (each may carry an ``href`` to where it is checked, used for the
    decisive evidence): first what stands (:func:`summary_sentence`) and the spine
    (:func:`render_spine`), then the proofs in numbers, the legend, the whole graph
    (:func:`render_svg`, in a box that scrolls sideways) and the table."""
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
    numbers = (f"<p class='mmcl-blueprint-numbers'><b>The proofs in numbers.</b> Of the paper's {len(paper)} proofs, "
               f"<b>{len(st['root'])}</b> fail at a step of their own inside the premises (the errors "
               f"themselves; {len(far & set(st['root']))} of them reach no theorem), <b>{len(st['inherited'])}</b> "
               f"are valid but rest on one of those, <b>{len(st['outside'])}</b> needs more only where a premise "
               f"fails, <b>{len(st['valid'])}</b> are valid and rest on nothing with a gap, and "
               f"<b>{len(st['not-audited'])}</b> are not audited. Measured: "
               + ", ".join(f"<b>{v.get(k, 0)}</b> {bp.VERDICT_TEXT[k]}" for k in bp.VERDICT_ORDER)
               + f", <b>{v.get('', 0)}</b> without a verdict. Ours ({len(ours)} statements): {rel}.</p>")
    return (summary_sentence(verdicts) + "<div class='mmcl-blueprint-spine'>" + render_spine(verdicts, links)
            + "</div>" + numbers + render_legend() + "<div class='mmcl-blueprint'>"
            + render_svg(None, verdicts, links) + "</div>"
            + render_table(counts, links, claims_links, evidence=decisive(rows)))


def write_figure(rows: Iterable[Mapping], out_dir=None) -> List:
    """Record the verdicts the rows give (:func:`mmcl.figures.blueprint_graph.record_verdicts`, read
    back by ``mmcl figure blueprint``) and write the figure for a talk with them
    (:func:`mmcl.figures.blueprint_graph.draw_blueprint`) as ``blueprint.{pdf,svg,png}`` into
    ``out_dir`` (default :func:`mmcl.figures.figure_dir`).  Returns the paths written."""
    import matplotlib.pyplot as plt

    from mmcl.figures.blueprint_graph import draw_blueprint, record_verdicts
    from mmcl.figures.theme import save_figure

    verdicts = verdicts_of(rows)
    record_verdicts(verdicts)
    fig = draw_blueprint(verdicts)
    try:
        return save_figure(fig, "blueprint", out_dir)
    finally:
        plt.close(fig)
