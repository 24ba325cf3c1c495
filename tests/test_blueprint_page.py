"""The Blueprint page's pieces (mmcl.booksupport.blueprint_page), the graph's layout by Graphviz's
dot and its crossings (mmcl.figures.blueprint_graph), the standings and measured_verdict, on a small
blueprint of our own and on the paper's."""
import re
from typing import Dict, Tuple

import pytest

from mmcl.figures import blueprint_graph as graph
from mmcl.figures.blueprint_graph import crossings, layout, short_label

from mmcl.booksupport import blueprint_page as page
from mmcl.proofs import blueprint as bp


@pytest.fixture
def small(monkeypatch):
    sts = (bp.Statement("Assumption 4.1 (4)", "assumption", "sample sizes", bp.Audit("valid"), premises=("4a",)),
           bp.Statement("Lemma C.9", "lemma", "a bound on B(0)", bp.Audit("gap-inside", "the Bernstein step",
                                                                        "E B(0) grows like n"), section="sec-x"),
           bp.Statement("Lemma C.10", "lemma", "init noise above B(0)/n", bp.Audit("not-audited"),
                        proof_uses=("Lemma C.9",), premises=("C.10",)),
           bp.Statement("Theorem 4.2 (1)", "theorem", "the loss goes to 0", bp.Audit("valid"),
                        uses=("Assumption 4.1 (4)",), proof_uses=("Lemma C.10",)))
    monkeypatch.setattr(bp, "STATEMENTS", sts)
    return sts


def test_layout_puts_every_statement_right_of_what_it_uses(small):
    lay = layout()
    assert set(lay.nodes) == {s.key for s in bp.STATEMENTS}
    for src, dst, _ in bp.edges():
        assert lay.nodes[src][0] < lay.nodes[dst][0], (src, dst)
    # the boxes do not overlap, and every edge runs from its source's box to its target's
    boxes = list(lay.nodes.values())
    for i, (x, y, w, h) in enumerate(boxes):
        for x2, y2, w2, h2 in boxes[i + 1:]:
            assert abs(x - x2) >= (w + w2) / 2 - 1e-6 or abs(y - y2) >= (h + h2) / 2 - 1e-6
    for src, dst, kind, pts in lay.edges:
        assert len(pts) % 3 == 1
        (x0, _, w0, _), (x1, _, w1, _) = lay.nodes[src], lay.nodes[dst]
        assert abs(pts[0][0] - (x0 + w0 / 2)) < 2 and x1 - w1 / 2 - 15 < pts[-1][0] < x1 - w1 / 2


def test_crossings_counts_pairs_of_edges_that_cross():
    x = [("a", "b", [(0, 0), (2, 2)]), ("c", "d", [(0, 2), (2, 0)])]
    assert crossings(x) == 1
    assert crossings([x[0], ("c", "d", [(0, 2), (0.5, 3)])]) == 0  # apart
    assert crossings([x[0], ("a", "d", [(0, 2), (2, 0)])]) == 0  # a shared end never counts
    # a polyline crossing the other twice counts once; three edges through one segment count twice
    zig = ("c", "d", [(0, 2), (1.5, 0), (2, 3)])
    assert crossings([x[0], zig]) == 1
    assert crossings([x[0], x[1], ("e", "f", [(1, 3), (1, -1)])]) == 3


def _barycentre_layers(sts, sweeps: int = 8) -> Dict[str, Tuple[int, float]]:
    """The layout the Blueprint had before dot: a statement one layer right of the deepest it uses,
    ordered in its layer by ``sweeps`` passes of the barycentre heuristic (the baseline dot must
    not do worse than)."""
    by = {s.key: s for s in sts}
    deps = {s.key: [u for u in s.uses + s.proof_uses if u in by] for s in sts}
    layer: Dict[str, int] = {}

    def depth(k):
        if k not in layer:
            layer[k] = 1 + max((depth(u) for u in deps[k]), default=-1)
        return layer[k]

    for s in sts:
        depth(s.key)
    rows = [[s.key for s in sts if layer[s.key] == j] for j in range(1 + max(layer.values()))]
    users = {s.key: [k for k, ds in deps.items() if s.key in ds] for s in sts}
    index = {k: float(i) for row in rows for i, k in enumerate(row)}
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        for j in (range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)):
            def bary(k):
                nb = deps[k] if down else users[k]
                return sum(index[x] for x in nb) / len(nb) if nb else index[k]
            rows[j] = sorted(rows[j], key=lambda k: (bary(k), index[k]))
            for i, k in enumerate(rows[j]):
                index[k] = float(i)
    return {k: (layer[k], index[k]) for k in layer}


def test_dot_crosses_no_more_edges_than_the_layering_it_replaced():
    """On the paper's graph (every edge a statement or a proof uses), as drawn: the old layers' edges
    were Bezier curves from the right side of one box to the left side of the next; dot's are its
    splines.  Straight segments between the centres are compared as well."""
    edges = bp.edges()
    linked = {k for e in edges for k in e[:2]}
    old = _barycentre_layers([s for s in bp.STATEMENTS if s.key in linked])
    w, dx, dy = 70.0, 86.0, 31.0  # the old page's box width and spacing
    centre = {k: (layer * dx, i * dy) for k, (layer, i) in old.items()}
    sampler = graph.Layout(0, 0, {}, [], {})
    old_drawn = []
    for a, b, _ in edges:
        (x0, y0), (x1, y1) = centre[a], centre[b]
        x0, x1 = x0 + w / 2, x1 - w / 2
        mid = (x0 + x1) / 2
        old_drawn.append((a, b, sampler.polyline([(x0, y0), (mid, y0), (mid, y1), (x1, y1)])))
    lay = layout([s.key for s in bp.STATEMENTS], edges)
    new_drawn = [(a, b, lay.polyline(pts)) for a, b, _, pts in lay.edges]
    before, after = crossings(old_drawn), crossings(new_drawn)
    assert after <= before, (before, after)
    dot_centre = {k: (x, y) for k, (x, y, _, _) in lay.nodes.items()}
    straight_before = crossings([(a, b, [centre[a], centre[b]]) for a, b, _ in edges])
    straight_after = crossings([(a, b, [dot_centre[a], dot_centre[b]]) for a, b, _ in edges])
    assert straight_after <= straight_before, (straight_before, straight_after)


def test_without_dot_the_error_names_the_package(monkeypatch):
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="install the package graphviz"):
        layout()


def test_a_cycle_or_an_unknown_edge_is_refused(small, monkeypatch):
    a = bp.Statement("Lemma C.1", "lemma", "one", bp.Audit("valid"), uses=("Lemma C.2",))
    b = bp.Statement("Lemma C.2", "lemma", "two", bp.Audit("valid"), proof_uses=("Lemma C.1",))
    with pytest.raises(ValueError, match="cycle"):
        bp.check_blueprint([a, b])
    with pytest.raises(ValueError, match="not a statement of the blueprint"):
        bp.check_blueprint([a])
    with pytest.raises(ValueError, match="needs the step and the reason"):
        bp.Audit("gap-inside")
    with pytest.raises(ValueError, match="not condition keys"):
        bp.Statement("Lemma C.3", "lemma", "x", bp.Audit("valid"), premises=("9z",))


def test_measured_verdict_prefers_a_refutation_then_support_inside_the_premises():
    assert bp.measured_verdict(["outside", "holds", "fails"]) == "fails"
    assert bp.measured_verdict(["outside", "beyond", "holds", "observation"]) == "holds"
    # evidence against outranks evidence for at the same standing (one order, VERDICT_ORDER)
    assert bp.measured_verdict(["outside", "beyond"]) == "outside"
    assert bp.measured_verdict(["beyond"]) == "beyond"
    assert bp.measured_verdict(["observation"]) == ""
    with pytest.raises(ValueError, match="not among"):
        bp.measured_verdict(["ok"])


def test_rows_count_for_the_statements_they_name_and_the_svg_marks_them(small):
    rows = [dict(paper="Theorem 4.2 (1)", verdict="beyond", claim="the loss falls", href="ch.html#a"),
            dict(paper="Lemma C.10", verdict="outside", claim="a margin", href="ch.html#b"),
            dict(paper="Lemma C.10", verdict="outside", claim="another margin"),
            dict(paper="Eq. (11)", verdict="holds", claim="the decomposition"),
            dict(paper="Lemma 1", verdict="holds", source="zhang2023mmcl", claim="other work")]
    best = page.decisive(rows + [dict(paper="Theorem 4.2 (1)", verdict="holds", claim="inside", href="ch.html#c")])
    assert best["Theorem 4.2 (1)"]["claim"] == "inside" and best["Lemma C.10"]["claim"] == "a margin"
    counts = page.measured(rows)
    assert counts == {"Theorem 4.2 (1)": {"beyond": 1}, "Lemma C.10": {"outside": 2}}
    verdicts = {k: bp.measured_verdict(c) for k, c in counts.items()}
    svg = page.render_svg(None, verdicts, {"Lemma C.9": "chapter.html#sec-x"})
    nodes = re.findall(r'<g class="mmcl-node" data-key="([^"]+)" data-audit="([^"]+)" data-verdict="([^"]*)"', svg)
    assert sorted(nodes) == sorted([("Assumption 4.1 (4)", "valid", ""), ("Lemma C.9", "gap-inside", ""),
                                    ("Lemma C.10", "not-audited", "outside"), ("Theorem 4.2 (1)", "valid", "beyond")])
    # one edge style: what only a proof uses is said by the data and the tooltip, not by a dash
    kinds = re.findall(r'<path class="mmcl-edge" data-kind="(\w+)" d="M[0-9.]+,[0-9.]+ C', svg)
    assert sorted(kinds) == ["proof", "proof", "uses"] and "stroke-dasharray" not in svg
    # one fill per standing, merged from the audit, what a node rests on and its measured verdict
    drawn = dict(re.findall(r'data-key="([^"]+)" data-audit="[^"]+" data-verdict="[^"]*" data-standing="[^"]+">'
                            r'<title>[^<]*</title>\n<rect [^>]*fill="([^"]+)"', svg))
    assert drawn == {"Assumption 4.1 (4)": graph.STANDING_COLOR["premise"], "Lemma C.9": graph.STANDING_COLOR["gap"],
                     "Lemma C.10": graph.STANDING_COLOR["not audited"],
                     "Theorem 4.2 (1)": graph.STANDING_COLOR["rests on a gap"]}
    assert '<a href="chapter.html#sec-x">' in svg and "E B(0) grows like n" in svg
    table = page.render_table(counts, claims_links={"Lemma C.10": "claims.html#claims-lemma-c-10"},
                              evidence=page.decisive(rows))
    assert "2 outside the premises" in table and "claims.html#claims-lemma-c-10" in table
    assert "<a class='reference internal' href='ch.html#b'>a margin</a>" in table
    assert table.index("Theorem 4.2 (1)") < table.index("Lemma C.9") < table.index("Lemma C.10")  # by importance
    assert "gap inside the premises" in table and "the Bernstein step" in table
    full = page.render_page(rows)
    # the first sentence says what stands: the errors themselves apart from the proofs resting on them
    assert "Of the paper's 3 proofs, <b>1</b> fail at a step of their own" in full
    assert "<b>1</b> are valid but rest on one of those" in full  # Theorem 4.2 (1), through C.10 -> C.9


def test_short_labels():
    assert short_label("Lemma C.10") == "C.10"
    assert short_label("Theorem 4.3 (2)") == "Thm 4.3 (2)"
    assert short_label("Assumption 4.1 (6)") == "A4.1 (6)"
    assert short_label("Proposition C.13") == "Prop. C.13"


def test_the_findings_table_takes_its_verdicts_and_checks_from_the_rows(small):
    from mmcl.booksupport.findings import Finding, featured_row, render_findings

    rows = [dict(paper="Theorem 4.2 (1)", verdict="beyond", claim="the loss falls below 0.02", href="ch.html#a"),
            dict(paper="Figure 1", verdict="holds", claim="the multi-modal features win", href="f.html#b"),
            dict(paper="Figure 1", verdict="observation", claim="a ratio of eight", href="f.html#c")]
    fs = (Finding("convergence", ("Theorem 4.2 (1)",), "sec-x"),
          Finding("the experiment", ("Figure 1",), "sec-y", row="a ratio of"),
          Finding("nothing measured", ("Lemma C.9",), "sec-z"))
    assert featured_row(fs[0], rows)["href"] == "ch.html#a"
    assert featured_row(fs[1], rows)["claim"] == "a ratio of eight"  # the featured row, even an observation
    assert featured_row(fs[2], rows) is None
    table = render_findings(rows, {"sec-x": "page.html#sec-x"}, findings=fs)
    assert "<a class='reference internal' href='page.html#sec-x'>convergence</a>" in table
    assert "holds beyond its premises</span>: <a class='reference internal' href='ch.html#a'>" in table
    assert "rests" not in table.split("convergence")[1].split("</tr>")[0] or "C.9" in table
    assert "<b>Figure 1</b>: <span class='mmcl-verdict mmcl-holds'>holds</span>" in table
    assert "<b>Lemma C.9</b>: measured, no verdict" in table
    assert table.count("<tr>") == 3 + 1  # the header and one line per finding


def test_every_finding_names_statements_the_blueprint_or_the_register_knows():
    from mmcl.booksupport.findings import FINDINGS

    for f in FINDINGS:
        for p in f.papers:
            assert bp.resolve(p) or p in ("Figure 1", "Table 1"), p


def test_a_findings_verdict_and_its_featured_row_never_disagree():
    """For every statement-backed line of the reading guide's findings, the row shown as deciding it
    carries the statement's measured verdict (one order, mmcl.proofs.blueprint.VERDICT_ORDER)."""
    from mmcl.booksupport.findings import FINDINGS, featured_row

    rows = [dict(paper="Lemma 5.4", verdict="beyond", claim="the signal reaches order one"),
            dict(paper="Lemma 5.4", verdict="outside", claim="the noise is ten times 1/sqrt n"),
            dict(paper="Theorem 4.3 (2)", verdict="holds", claim="zero at the parallel nu"),
            dict(paper="Theorem 4.3 (2)", verdict="fails", claim="chance under Sec. 3.3"),
            dict(paper="Our Proposition 1", verdict="holds", claim="above the floor")]
    counts = page.measured(rows)
    for f in FINDINGS:
        stmts = [s for p in f.papers for s in bp.resolve(p)]
        r = featured_row(f, rows)
        if not stmts or r is None:
            continue
        verdicts = {bp.measured_verdict(counts.get(s.key, {})) for s in stmts} - {""}
        assert r["verdict"] in verdicts, (f.claim, r, verdicts)
    lemma54 = next(f for f in FINDINGS if f.papers == ("Lemma 5.4",))
    assert featured_row(lemma54, rows)["verdict"] == "outside"  # evidence against outranks evidence for


@pytest.fixture
def with_ours(small, monkeypatch):
    sts = small + (bp.Statement("Our Proposition 1", "ours", "a floor", bp.Audit("valid"),
                                uses=("Assumption 4.1 (4)",), relates=(("refutes", "Theorem 4.2 (1)"),)),
                   bp.Statement("Lemma B.1", "lemma", "a clean lemma", bp.Audit("valid")))
    monkeypatch.setattr(bp, "STATEMENTS", sts)
    return sts


def test_one_standing_per_node_merges_the_audit_what_it_rests_on_the_verdict_and_ours(with_ours, monkeypatch):
    assert bp.standing("Lemma C.9") == "gap"
    assert bp.standing("Lemma C.9", "fails") == bp.standing("Lemma C.9", "reach-fails") == "refuted"
    assert bp.standing("Lemma C.9", "holds") == "gap"  # a conclusion borne out does not mend the proof
    assert bp.standing("Lemma C.10", "outside") == "not audited"
    assert bp.standing("Lemma B.1") == "stands" and bp.standing("Lemma B.1", "fails") == "refuted"
    # valid steps on a gap further back; and refuted by our statement whatever the register says
    assert bp.standing("Theorem 4.2 (1)", "holds") == "refuted"
    monkeypatch.setattr(bp, "STATEMENTS", tuple(s for s in with_ours if s.key != "Our Proposition 1"))
    assert bp.standing("Theorem 4.2 (1)", "holds") == "rests on a gap"
    assert bp.standing("Assumption 4.1 (4)", "holds") == "premise"
    with pytest.raises(ValueError, match="verdict='ok' is not a measured verdict; valid: '', 'holds'"):
        bp.standing("Lemma B.1", "ok")
    assert set(graph.STANDING_COLOR) == set(bp.STANDINGS) == set(bp.STANDING_TEXT)
    assert len(set(graph.STANDING_COLOR.values())) == len(bp.STANDINGS)  # one colour each


def test_the_spine_holds_the_theorems_and_what_their_proofs_use_directly():
    keys, edges = graph.spine()
    tops = {s.key for s in bp.STATEMENTS if s.kind in ("theorem", "ours")}
    assert tops <= set(keys) and 8 <= len(keys) <= 16
    assert all(bp.statement(k).kind != "definition" for k in keys)
    for a, b, kind in edges:
        if kind == "uses":
            assert a in bp.ancestors(b), (a, b)
            # no edge that a path through another node of the spine already gives
            assert not any(a in bp.ancestors(c) and c in bp.ancestors(b) for c in keys if c not in (a, b)), (a, b)
    assert {(a, b, r) for a, b, r in bp.relations()} <= set(edges)
    direct = {u for k in tops for u in bp.statement(k).uses + bp.statement(k).proof_uses
              if bp.statement(u).kind != "definition"}
    assert set(keys) == tops | direct


def test_the_first_sentence_says_which_theorems_stand_from_the_standings(with_ours):
    first = page.summary_sentence({})
    assert "Of the 2 theorems" in first
    assert "Theorem 4.2 (1) is refuted</span>" in first and "Our Proposition 1 stands</span>" in first
    assert "1 of the paper's 4 proofs has a gap of its own and the checks refute 0 statements" in first
    again = page.summary_sentence({"Lemma C.9": "fails", "Our Proposition 1": "fails"})
    assert "Theorem 4.2 (1) and Our Proposition 1 are refuted</span>" in again
    assert "the checks refute 1 statement where its premises hold" in again
    full = page.render_page([dict(paper="Lemma C.9", verdict="fails", claim="a bound")])
    order = [full.index(c) for c in ("mmcl-blueprint-summary", "mmcl-blueprint-spine", "mmcl-blueprint-graph")]
    assert order == sorted(order)  # the sentence, the spine, then the whole graph
    spine_svg = full[full.index("<svg"):full.index("</svg>")]
    assert re.findall(r'class="mmcl-spine-node" data-key="([^"]+)" data-standing="([^"]+)"', spine_svg) == [
        ("Assumption 4.1 (4)", "premise"), ("Lemma C.10", "not audited"), ("Theorem 4.2 (1)", "refuted"),
        ("Our Proposition 1", "stands")]
    assert ">refuted</text>" in spine_svg and 'font-size="13"' in spine_svg


def test_the_talk_figure_draws_every_node_in_its_standings_colour_with_the_word(monkeypatch, tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    from mmcl.figures.registry import make

    verdicts = {"Theorem 4.3 (2)": "holds", "Lemma C.9": "fails", "Lemma 5.2": "beyond"}
    fig = graph.draw_blueprint(verdicts)
    try:
        boxes = {p.get_gid(): p for p in fig.axes[0].patches if p.get_gid()}
        texts = [t.get_text() for t in fig.axes[0].texts]
        assert set(boxes) == {s.key for s in bp.STATEMENTS}
        for key, box in boxes.items():
            word = bp.standing(key, verdicts.get(key, ""))
            assert box.get_facecolor() == to_rgba(graph.STANDING_COLOR[word]), key
            assert f"{short_label(key)}\n{word}" in texts, key
        # refuted by Our Proposition 1: never drawn as holding, whatever a row says
        assert boxes["Theorem 4.3 (2)"].get_facecolor() == to_rgba(graph.STANDING_COLOR["refuted"])
        assert "Thm 4.3 (2)\nrefuted" in texts
    finally:
        plt.close(fig)
    # the registered figure carries the verdicts the book's last build recorded
    monkeypatch.setenv("MMCL_CACHE_DIR", str(tmp_path))
    assert graph.recorded_verdicts() is None
    fig = make("blueprint", "tiny")
    assert "no measured verdicts" in fig.axes[0].get_title()
    plt.close(fig)
    graph.record_verdicts({"Lemma B.1": "holds", "Lemma C.9": "fails"})
    assert graph.recorded_verdicts() == {"Lemma B.1": "holds", "Lemma C.9": "fails"}
    fig = make("blueprint", "tiny")
    try:
        box = next(p for p in fig.axes[0].patches if p.get_gid() == "Lemma C.9")
        assert box.get_facecolor() == to_rgba(graph.STANDING_COLOR["refuted"])
        assert "no measured verdicts" not in fig.axes[0].get_title()
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="not measured verdicts"):
        graph.record_verdicts({"Lemma B.1": "true"})


@pytest.mark.parametrize("verdicts", [None, {"Theorem 4.3 (2)": "fails"}], ids=["unmeasured", "measured"])
def test_the_talk_export_reads_on_a_slide_with_and_without_measured_verdicts(verdicts):
    """Before the book's first build no verdicts are recorded and the title says so: on a slide
    (talk style, 16:9) no text of either version is cut off or overlaps another."""
    import matplotlib.pyplot as plt

    from helpers import text_problems
    from mmcl.figures.theme import TALK_SIZE, talk

    with talk():
        fig = graph.draw_blueprint(verdicts)
        fig.set_size_inches(*TALK_SIZE)
    try:
        assert text_problems(fig) == []
        assert ("no measured verdicts" in fig.axes[0].get_title()) == (verdicts is None)
    finally:
        plt.close(fig)
