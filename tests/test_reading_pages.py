"""What the Sphinx extension and the reading guide compute for how the pages read, without a build:
the verdict that opens the reading guide and the Claims page, the figure names a cell shows, the
run-time table and the plain text of a title with math."""
import re

from mmcl.booksupport.findings import FINDINGS, Finding, render_verdict
from mmcl.booksupport.reading import run_times_html, show_names, tex_plain
from mmcl.proofs import blueprint as bp


def _row(paper, verdict, claim="c"):
    return {"paper": paper, "verdict": verdict, "claim": claim, "source": "huang2024comparison"}


def test_the_verdict_sorts_findings_by_the_blueprints_word_for_them():
    findings = (Finding("Figure 1: it works", ("Figure 1",), "sec-a", row="works"),
                Finding("Lemma 5.4: noise stays small", ("Lemma 5.4",), "sec-b"),
                Finding("Ours: the window", ("Our Theorem 1",), "sec-c"))
    rows = [_row("Figure 1", "holds", "it works"), _row("Lemma 5.4", "fails"), _row("Our Theorem 1", "holds")]
    html = render_verdict(rows, {"sec-a": "a.html#x"}, findings)
    stands, falls, ours = re.findall(r"<p><b>What (?:stands|does not stand as proved|holds instead)\.</b>(.*?)</p>", html)
    assert "It works" in stands and "a.html#x" in stands and "Noise stays small" not in stands
    assert "Noise stays small" in falls and re.search(r"mmcl-standing-refuted'[^>]*>refuted<", falls)
    assert "The window" in ours and f">{bp.standing('Our Theorem 1', 'holds')}<" in ours
    audit = bp.audit_summary()
    assert f"<b>{len(audit['root'])}</b> have a root error" in falls
    assert "data-stands='1' data-falls='1' data-ours='1'" in html
    # the lemma holding where measured does not mend its proof's gap: the Blueprint says "gap"
    assert bp.standing("Lemma 5.4", "holds") == "gap"
    html = render_verdict([_row("Figure 1", "holds", "it works"), _row("Lemma 5.4", "holds")], {}, findings)
    assert "data-stands='1' data-falls='1'" in html and re.search(r"mmcl-standing-gap'[^>]*>gap<", html)
    # a statement that stands on the Blueprint, measured to hold, stands here too
    clean = next(st.key for st in bp.STATEMENTS if st.kind == "lemma" and bp.standing(st.key, "holds") == "stands")
    sound = (Finding(f"{clean}: a clean lemma", (clean,), "sec-d"),)
    html = render_verdict([_row(clean, "holds")], {}, sound)
    assert "data-stands='1' data-falls='0'" in html and re.search(r"mmcl-standing-stands'[^>]*>stands<", html)


def test_the_books_findings_each_land_in_one_sentence():
    rows = [_row(p, "holds") for f in FINDINGS for p in f.papers]
    html = render_verdict(rows)
    n = sum(int(x) for x in re.findall(r"data-(?:stands|falls|ours)='(\d+)'", html))
    assert n == len(FINDINGS)


def test_a_cells_figure_names_are_the_last_string_of_each_show_call():
    src = ('env.show(\n    figs.plot_cmu(grid, overlay=experiment.race_overlay("cmu", env.size)), "phase-cmu"\n)\n'
           'x = 1\nenv.show(figs.b(y), \'fig-b\',)\nprint("not-a-figure")')
    assert show_names(src) == ["phase-cmu", "fig-b"]
    assert show_names("print('x')") == []


def test_run_times_table_formats_seconds_and_totals():
    html = run_times_html([("A", "a.html", 7.2, "cache"), ("B", "b.html", 498.0, "direct"), ("C", "c.html", None, "")])
    cells = re.findall(r"<td data-seconds='([^']*)'>([^<]*)</td>", html)
    assert cells == [("7.2", "7 s"), ("498.0", "8.3 min"), ("", "&ndash;")]
    assert "<td>all chapters</td><td>8.4 min</td>" in html


def test_a_title_with_math_reads_as_text_in_a_link():
    assert tex_plain("The decisive point: n=9{,}224") == "The decisive point: n=9,224"
    assert tex_plain(r"Does the verdict depend on our \sigma_0?") == "Does the verdict depend on our σ0?"
