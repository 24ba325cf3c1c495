"""The Blueprint page's pieces (mmcl.booksupport.blueprint_page) and the graph's layout
(mmcl.proofs.blueprint.layout, measured_verdict), on a small blueprint of our own."""
import re

import pytest

from mmcl.figures.blueprint_graph import layout, short_label

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
    pos = layout()
    for src, dst, _ in bp.edges():
        assert pos[src][0] < pos[dst][0], (src, dst)
    assert pos["Theorem 4.2 (1)"][0] == 2 and pos["Lemma C.9"][0] == 0
    # positions within a layer are distinct ranks
    for layer in {p[0] for p in pos.values()}:
        ranks = sorted(p[1] for p in pos.values() if p[0] == layer)
        assert ranks == list(range(len(ranks)))


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
    assert len(re.findall(r"<path d=\"M[0-9.]+,[0-9.]+ C", svg)) == 3 and svg.count('stroke-dasharray="2,3"') == 2  # two proof-only edges
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
