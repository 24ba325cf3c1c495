"""The rendered book, opened in headless Chromium: every page of _toc.yml shows typeset math (no
raw TeX), no broken image, no Python traceback, and every chapter shows its figures."""
import re

import pytest

from bookpages import HTML, ROOT, chapter_pages, toc_pages

PAGES = toc_pages()
CHAPTERS = chapter_pages()  # the reading guide first

# text of a page outside code blocks and rendered math
VISIBLE_TEXT_JS = """
const main = document.querySelector('main') || document.body;
const clone = main.cloneNode(true);
clone.querySelectorAll('pre, code, .highlight, script, style, mjx-container, .MathJax').forEach(e => e.remove());
return clone.innerText;
"""
WAIT_MATHJAX_JS = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done('no-mathjax'); return; }
MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));
"""
RAW_TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\\begin\{|\\(?:gamma|rho|mu|xi|tau|sigma|frac|mathbf|boldsymbol|tilde|bmu|bxi)\b")


def _open(browser, server, page):
    browser.get(f"{server}/{page}")
    return browser.execute_async_script(WAIT_MATHJAX_JS)


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_math_images_and_no_traceback(browser, server, page):
    assert (HTML / page).exists(), f"{page} was not built"
    status = _open(browser, server, page)
    text = browser.execute_script(VISIBLE_TEXT_JS)
    assert "Traceback (most recent call last)" not in text, f"{page} shows a Python traceback"
    raw = RAW_TEX.findall(text)
    assert not raw, f"{page} shows raw TeX {raw[:5]} instead of typeset math"
    n_math = browser.execute_script("return document.querySelectorAll('mjx-container').length")
    if page in CHAPTERS:
        assert status == "ok", f"MathJax did not start on {page}: {status}"
        assert n_math > 0, f"{page} has no typeset math"
    errors = browser.execute_script("return document.querySelectorAll('mjx-merror').length")
    assert errors == 0, f"{page}: {errors} MathJax errors (unknown macro?)"
    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    assert not broken, f"{page} has broken images: {broken}"


@pytest.mark.book
@pytest.mark.parametrize("page", CHAPTERS)
def test_every_chapter_shows_a_figure(browser, server, page):
    _open(browser, server, page)
    n = browser.execute_script(
        "return document.querySelectorAll('.cell_output img, .output img, figure img').length")
    assert n > 0, f"{page} shows no figure"


@pytest.mark.book
def test_every_registered_figure_was_written_in_three_formats(html_root):
    from mmcl.figures.registry import figures

    names = list(figures())
    assert len(names) >= 30, f"the figure registry holds only {len(names)} figures"
    missing = [f"{n}.{ext}" for n in names for ext in ("pdf", "svg", "png")
               if not (html_root / "figures" / f"{n}.{ext}").exists()]
    assert not missing, f"figures in mmcl.figures.registry but not produced by the build: {missing}"


@pytest.mark.book
def test_figures_page_lists_the_registry(html_root):
    from mmcl.figures.registry import figures

    page = (html_root / "book" / "figures.html").read_text()
    absent = [n for n in figures() if f"figures/{n}.png" not in page]
    assert not absent, f"the Figures page does not link these registered figures: {absent}"


@pytest.mark.book
def test_chapters_offer_download_and_launch_buttons(browser, server):
    page = CHAPTERS[0]
    _open(browser, server, page)
    html = browser.page_source
    assert "dropdown-download-buttons" in html or "download" in html.lower()
    assert ".ipynb" in html
    # _config.yml sets no repository URL: no button may point at a repository that does not exist
    assert "mybinder.org" not in html and "colab.research.google.com" not in html
    assert "repository-button" not in html and "github.com/mmcl" not in html


@pytest.mark.book
def test_claims_page_holds_every_chapters_claims_and_its_links_resolve(browser, server, html_root):
    """The Claims page has one row per claim of the executed chapters (read back from the chapters' own
    check tables), every chapter contributes, and every row's link opens a page with that anchor."""
    from mmcl.booksupport.claims import parse_html

    chapters = CHAPTERS
    per_chapter = {p: parse_html((html_root / p).read_text()) for p in chapters}
    silent = [p for p, rows in per_chapter.items() if not rows]
    assert not silent, f"chapters with no claims on their page: {silent}"
    _open(browser, server, "book/claims.html")
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.mmcl-claims-register tbody tr')).map(r => "
        "[r.querySelector('a').getAttribute('href'), r.querySelector('.mmcl-verdict').innerText])")
    assert len(rows) == sum(len(v) for v in per_chapter.values()), "the Claims page does not list every claim"
    summary = browser.execute_script("return document.querySelector('.mmcl-claims-summary').innerText")
    assert f"{len(rows)} claims from {len(chapters)} chapters" in summary, summary
    missing = []
    for href, _verdict in rows:
        page, _, anchor = href.partition("#")
        target = (html_root / "book" / page).resolve()
        if not target.exists() or (anchor and f'id="{anchor}"' not in target.read_text()):
            missing.append(href)
    assert not missing, f"Claims page links that open no section: {sorted(set(missing))[:10]}"


@pytest.mark.book
def test_blueprint_page_draws_every_statement_linked_and_marked(browser, server, html_root):
    """The Blueprint page shows the dependency graph as an SVG of one node per statement of
    mmcl.proofs.blueprint, filled by its audit and marked by the verdict the chapters' rows give it;
    every node with a section opens a page that has that anchor, and the table has one line per
    statement."""
    from mmcl.booksupport.blueprint_page import measured
    from mmcl.booksupport.claims import parse_html
    from mmcl.proofs import blueprint as bp

    _open(browser, server, "book/blueprint.html")
    nodes = browser.execute_script("""
        return Array.from(document.querySelectorAll('svg.mmcl-blueprint-graph g.mmcl-node')).map(g => {
          const a = g.closest('a'); const box = g.getBoundingClientRect();
          return [g.dataset.key, g.dataset.audit, g.dataset.verdict, a ? a.getAttribute('href') : null,
                  box.width, box.height];
        });""")
    assert sorted(n[0] for n in nodes) == sorted(s.key for s in bp.STATEMENTS)
    assert all(w > 10 and h > 5 for *_, w, h in nodes), "nodes are not drawn at a visible size"
    audits = {s.key: s.audit.status for s in bp.STATEMENTS}
    assert all(audits[k] == a for k, a, *_ in nodes)
    # the measured verdicts are those of the chapters' rows
    rows = [r for p in CHAPTERS for r in parse_html((html_root / p).read_text())]
    expected = {k: bp.measured_verdict(c) for k, c in measured(rows).items()}
    assert {k: v for k, v, in ((n[0], n[2]) for n in nodes) if v} == {k: v for k, v in expected.items() if v}
    assert sum(1 for n in nodes if n[2]) >= 15, "fewer than 15 statements carry a measured verdict"
    linked = [n for n in nodes if n[3]]
    assert len(linked) == sum(1 for s in bp.STATEMENTS if s.section)
    missing = []
    for *_, href, _, _ in linked:
        page, _, anchor = href.partition("#")
        target = (html_root / "book" / page).resolve()
        if not target.exists() or (anchor and f'id="{anchor}"' not in target.read_text()):
            missing.append(href)
    assert not missing, f"Blueprint nodes that open no section: {missing[:10]}"
    lines = browser.execute_script("return document.querySelectorAll('table.mmcl-blueprint-table tbody tr').length")
    assert lines == len(bp.STATEMENTS)
    width = browser.execute_script("return document.querySelector('svg.mmcl-blueprint-graph').getBoundingClientRect().width")
    assert width > 300, f"the graph is {width}px wide"


def _viewport(browser, width, height):
    """Size the window so that the page's viewport is ``width`` x ``height`` CSS pixels."""
    browser.set_window_size(width, height)
    inner_w, inner_h = browser.execute_script("return [window.innerWidth, window.innerHeight]")
    browser.set_window_size(2 * width - inner_w, 2 * height - inner_h)


BLUEPRINT_FIRST_SCREEN_JS = """
const box = e => e.getBoundingClientRect();
const px = t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a;  // as drawn on screen
const summary = document.querySelector('.mmcl-blueprint-summary');
const spine = document.querySelector('svg.mmcl-blueprint-spine');
const labels = Array.from(spine.querySelectorAll('g.mmcl-spine-node text')).map(px);
const full = Array.from(document.querySelectorAll('svg.mmcl-blueprint-graph g.mmcl-node text')).map(px);
return {width: innerWidth, height: innerHeight, summary: [box(summary).top, box(summary).bottom],
        spine: [box(spine).top, box(spine).bottom, box(spine).left, box(spine).right],
        room: spine.parentElement.clientWidth, nodes: spine.querySelectorAll('g.mmcl-spine-node').length,
        smallest: Math.min(...labels), smallest_full: Math.min(...full), text: summary.innerText,
        scroll: [window.scrollX, window.scrollY]};
"""


@pytest.mark.book
def test_blueprint_first_screen_says_what_stands_and_shows_the_spine(browser, server):
    """At 1280 x 800 px the Blueprint's first screen holds the sentence that says which theorems
    stand and the whole spine, its labels at 12 px or more on screen; the whole graph below keeps
    its labels at 12 px too (drawn at its natural size, in a box that scrolls sideways)."""
    from mmcl.proofs import blueprint as bp

    old = browser.get_window_size()
    try:
        _viewport(browser, 1280, 800)
        _open(browser, server, "book/blueprint.html")
        m = browser.execute_script(BLUEPRINT_FIRST_SCREEN_JS)
    finally:
        browser.set_window_size(old["width"], old["height"])
    assert (m["width"], m["height"]) == (1280, 800) and m["scroll"] == [0, 0], m
    assert m["text"].startswith("What stands.") and "Theorem 4.3 (2)" in m["text"], m["text"]
    assert 0 <= m["summary"][0] < m["summary"][1] <= m["spine"][0], m
    assert m["spine"][1] <= 800, f"the spine ends at {m['spine'][1]:.0f} px, below the first screen"
    assert m["spine"][2] >= 0 and m["spine"][3] - m["spine"][2] <= m["room"] + 1 and m["spine"][3] <= 1280, m
    assert m["nodes"] >= sum(1 for s in bp.STATEMENTS if s.kind in ("theorem", "ours")) + 2
    assert m["smallest"] >= 12, f"the spine's labels are {m['smallest']:.1f} px at 1280 px"
    assert m["smallest_full"] >= 12, f"the graph's labels are {m['smallest_full']:.1f} px at 1280 px"


@pytest.mark.book
def test_claims_page_filters_by_verdict(browser, server):
    """Our own measurements are hidden at first (the paper's statements come first); ticking a verdict
    shows exactly its rows, unticking hides them, and each statement still names itself on its first
    visible row."""
    _open(browser, server, "book/claims.html")
    count = "return document.querySelectorAll('table.mmcl-claims-register tbody tr:not([hidden])').length"
    total = browser.execute_script("return document.querySelectorAll('table.mmcl-claims-register tbody tr').length")
    ours = browser.execute_script(
        "return document.querySelectorAll('table.mmcl-claims-register tr[data-verdict=\"observation\"]').length")
    assert total > ours > 0
    assert browser.execute_script(count) == total - ours, "our measurements are not hidden at first"
    shown = browser.execute_script("return document.querySelector('.mmcl-claims-shown').innerText")
    assert f"{total - ours} of {total}" in shown
    browser.execute_script("document.querySelector(\".mmcl-claims-filter input[data-verdict='observation']\").click()")
    assert browser.execute_script(count) == total
    browser.execute_script("document.querySelector(\".mmcl-claims-filter input[data-verdict='observation']\").click()")
    assert browser.execute_script(count) == total - ours
    unnamed = browser.execute_script("""
        const seen = new Set(); let bad = 0;
        for (const tr of document.querySelectorAll('table.mmcl-claims-register tbody tr:not([hidden])')) {
          const first = !seen.has(tr.dataset.group); seen.add(tr.dataset.group);
          if (first === tr.cells[0].classList.contains('mmcl-repeat')) bad += 1;
        }
        return bad;""")
    assert unnamed == 0, f"{unnamed} rows name their statement wrongly after filtering"
    # the theorems come first
    first = browser.execute_script("return document.querySelector('table.mmcl-claims-register td.mmcl-statement').innerText")
    assert first.startswith("Theorem"), first


@pytest.mark.book
def test_theorem_boxes_read_as_titled(browser, server):
    """A lemma box shows the paper's own number as its title ("Lemma 5.1 of the paper"): no second
    counter of the book's ("Lemma 1") and no repeated kind ("Lemma Lemma 5.1")."""
    seen = 0
    for page in CHAPTERS:
        _open(browser, server, page)
        titles = browser.execute_script(
            "return Array.from(document.querySelectorAll('div.proof > p.admonition-title')).map(e => e.innerText.trim());")
        for t in titles:
            seen += 1
            words = t.split()
            assert len(words) >= 2 and words[0].lower() != words[1].lower(), f"{page}: box titled {t!r}"
            assert not re.fullmatch(r"(Lemma|Theorem|Proposition|Assumption) \d+( \(.*\))?", t), f"{page}: {t!r}"
        if page == "book/single_stage1.html":
            assert titles[:2] == ["Lemma 5.1 of the paper", "Lemma 5.2 of the paper"], titles[:2]
    assert seen >= 25, seen


STORY_JS = """
const main = document.querySelector('article') || document.querySelector('main') || document.body;
const all = Array.from(main.querySelectorAll('*'));
const at = e => (e ? all.indexOf(e) : -1);
const folds = Array.from(main.querySelectorAll('details.mmcl-claims-fold'));
const closed = folds.filter(f => !f.open).length;
const summary = folds.length ? folds[0].querySelector('summary').innerText : '';
// unfold everything (the checks' code too): no line may be clipped by the column, folded or not
main.querySelectorAll('details').forEach(d => { d.open = true; });
const seen = p => (p.checkVisibility ? p.checkVisibility() : p.offsetParent !== null);
const clipped = Array.from(main.querySelectorAll('div.cell_input pre')).filter(seen)
  .filter(p => p.scrollWidth > p.clientWidth + 1)
  .map(p => p.innerText.split('\\n').reduce((a, b) => (a.length >= b.length ? a : b)));
return {takeaway: at(main.querySelector('div.admonition.takeaway')),
        figure: at(main.querySelector('.cell_output img')),
        section: at(main.querySelector('h2')) < 0 ? all.length : at(main.querySelector('h2')),
        folds: folds.length, closed: closed, summary: summary,
        tryit: main.querySelectorAll('div.admonition.try-it').length, clipped: clipped};
"""


@pytest.mark.book
@pytest.mark.parametrize("page", CHAPTERS[1:])
def test_a_chapter_reads_story_first(browser, server, page):
    """As a reader sees it: the takeaway box, then its figure, before the first section; the
    claims tables folded (a line counting the verdicts); no visible code line clipped by the column;
    a Try-it prompt. Read in a 1280 px window, a laptop's."""
    browser.set_window_size(1280, 1000)
    try:
        _open(browser, server, page)
        r = browser.execute_script(STORY_JS)
    finally:
        browser.set_window_size(1400, 1000)
    assert 0 <= r["takeaway"] < r["figure"] < r["section"], f"{page}: takeaway, figure, section order {r}"
    assert r["folds"] >= 1 and r["closed"] == r["folds"], f"{page}: claims tables not folded: {r}"
    assert re.match(r"Claims register: \d+ claims? checked: \d+ ", r["summary"]), r["summary"]
    assert r["tryit"] >= 1, f"{page}: no Try-it prompt"
    assert not r["clipped"], f"{page}: code cells wider than the column (longest lines): {r['clipped']}"
