"""How the rendered pages read, in headless Chromium at a laptop's 1280 px: display math and tables
fit the column or scroll in a box the reader sees, link texts show no TeX, the takeaway box does
not look like the paper's lemma boxes, one search box, every figure described by its caption, and
every chapter links the notebook the build executed."""
import json
import re

import pytest

from bookpages import HTML, chapter_pages, toc_pages

PAGES = toc_pages()
CHAPTERS = chapter_pages()

WAIT_MATHJAX_JS = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done('no-mathjax'); return; }
MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));
"""

# what a reader at 1280 px sees: the column's width, what sticks out of it and whether it scrolls in
# a box whose scroll bar is on screen with it (a box taller than the window hides its bar)
LAYOUT_JS = """
const main = document.querySelector('article.bd-article') || document.querySelector('main');
const col = main.getBoundingClientRect();
const inView = e => e.getClientRects().length > 0;
function scrollBox(e) {
  for (let p = e; p && p !== main; p = p.parentElement) {
    const s = getComputedStyle(p).overflowX;
    if ((s === 'auto' || s === 'scroll') && p.getBoundingClientRect().width <= col.width + 1
        && getComputedStyle(p).scrollbarWidth !== 'none')
      return p.getBoundingClientRect().height <= window.innerHeight;
  }
  return false;
}
const math = Array.from(main.querySelectorAll('mjx-container[display="true"]')).filter(inView)
  .map(m => ({id: (m.closest('div.math, div.proof') || {}).id || '', wide: m.scrollWidth > m.clientWidth + 1
              || m.getBoundingClientRect().right > col.right + 1, scrolls: scrollBox(m)}));
const tables = Array.from(main.querySelectorAll('table')).filter(inView)
  .map(t => ({cls: t.className, width: Math.round(t.getBoundingClientRect().width),
              wide: t.getBoundingClientRect().width > col.width + 1, scrolls: scrollBox(t)}));
// a table printed as text: two or more lines of four or more numbers
const num = /^[-+]?(\\d[\\d,]*\\.?\\d*(e[-+]?\\d+)?|nan|inf)%?$/i;
const texts = Array.from(main.querySelectorAll('div.cell_output pre')).filter(p =>
  p.innerText.split('\\n').filter(l => { const w = l.trim().split(/\\s+/); return w.length >= 4 && w.every(x => num.test(x)); }).length >= 2)
  .map(p => ({head: p.innerText.split('\\n')[0].slice(0, 60), wide: p.scrollWidth > p.clientWidth + 1}));
const links = Array.from(main.querySelectorAll('a')).map(a => a.innerText || a.textContent || '');
const searches = Array.from(document.querySelectorAll('.search-button-field, form.bd-search, input[type=search]'))
  .filter(e => e.getClientRects().length && e.getBoundingClientRect().width > 0 && getComputedStyle(e).visibility !== 'hidden'
          && !e.closest('dialog') && !e.parentElement.closest('.search-button-field, form.bd-search'));
return {col: col.width, math, tables, texts, links, searches: searches.length};
"""
TEX = re.compile(r"\{,\}|\\[A-Za-z]+|\$")


def _open(browser, server, page):
    browser.get(f"{server}/{page}")
    return browser.execute_async_script(WAIT_MATHJAX_JS)


@pytest.fixture
def laptop(browser):
    browser.set_window_size(1280, 1000)
    yield browser
    browser.set_window_size(1400, 1000)


@pytest.mark.book
@pytest.mark.parametrize("page", PAGES)
def test_nothing_sticks_out_of_the_column_and_links_read_as_text(laptop, server, page):
    """Display math and tables fit the column or scroll in a box whose scroll bar is on screen;
    a table printed as text fits; no link shows TeX (``n=9{,}224``); one search box."""
    _open(laptop, server, page)
    r = laptop.execute_script(LAYOUT_JS)
    hidden_math = [m["id"] for m in r["math"] if m["wide"] and not m["scrolls"]]
    assert not hidden_math, f"{page}: display math wider than the column, no visible scroll box: {hidden_math}"
    if page == "book/single_stage1.html":  # its equations are set to fit, Lemma 5.1's included
        wide = [m["id"] for m in r["math"] if m["wide"]]
        assert not wide, f"{page}: equations wider than the column: {wide}"
    hidden = [(t["cls"], t["width"]) for t in r["tables"] if t["wide"] and not t["scrolls"]]
    assert not hidden, f"{page}: tables wider than the {r['col']:.0f} px column, not in a visible scroll box: {hidden}"
    texts = [t["head"] for t in r["texts"] if t["wide"]]
    assert not texts, f"{page}: tables printed as text wider than the column: {texts}"
    tex = [t for t in r["links"] if TEX.search(t)]
    assert not tex, f"{page}: link texts showing TeX: {tex}"
    assert r["searches"] == 1, f"{page}: {r['searches']} search boxes"


@pytest.mark.book
def test_the_decisive_error_table_shows_both_modes(laptop, server):
    """The decisive runs' error table (a text table) shows its multi-modal columns in the column."""
    _open(laptop, server, "book/decisive_runs.html")
    found = laptop.execute_script("""
        const pre = Array.from(document.querySelectorAll('div.cell_output pre'))
          .find(p => p.innerText.includes('multi-modal') && /\\bn\\s+seeds\\b/.test(p.innerText));
        return pre ? [pre.scrollWidth, pre.clientWidth] : null;""")
    assert found, "the decisive runs chapter prints no error table with a multi-modal header"
    assert found[0] <= found[1] + 1, f"the error table is {found[0]} px wide in a {found[1]} px box"


@pytest.mark.book
def test_the_takeaway_box_does_not_look_like_a_lemma_box(laptop, server):
    """The shape, not the colour: a lemma box is a bar on the left and a tinted title band; the
    takeaway box (ours, not the paper's) must differ in at least two of bar, band and top rule."""
    _open(laptop, server, "book/single_stage1.html")
    shape = laptop.execute_script("""
        const alpha = c => { const m = c.match(/rgba?\\(([^)]*)\\)/); if (!m) return 0;
          const p = m[1].split(',').map(Number); return p.length > 3 ? p[3] : 1; };
        const f = e => { const s = getComputedStyle(e), t = getComputedStyle(e.querySelector('.admonition-title'));
          return {bar: parseFloat(s.borderLeftWidth) > 1 && s.borderLeftStyle !== 'none',
                  band: alpha(t.backgroundColor) > 0,
                  rule: parseFloat(s.borderTopWidth) > 1 && s.borderTopStyle !== 'none'}; };
        return [f(document.querySelector('div.admonition.takeaway')), f(document.querySelector('div.proof'))];""")
    takeaway, lemma = shape
    assert lemma["bar"] and lemma["band"], f"the lemma box's look changed: {lemma}"
    differ = [k for k in ("bar", "band", "rule") if takeaway[k] != lemma[k]]
    assert len(differ) >= 2, f"the takeaway box has the lemma box's shape: {takeaway} vs {lemma}"


@pytest.mark.book
@pytest.mark.parametrize("page", CHAPTERS)
def test_every_figure_is_described_by_its_caption(browser, server, page):
    """An image's alt text is its registered caption, never its file path."""
    from mmcl.figures.registry import figures

    captions = {spec.caption for spec in figures().values()}
    _open(browser, server, page)
    alts = browser.execute_script(
        "return Array.from(document.querySelectorAll('.cell_output img')).map(i => i.getAttribute('alt') || '')")
    assert alts, f"{page} shows no figure"
    bad = [a for a in alts if a not in captions]
    assert not bad, f"{page}: images whose alt text is not a figure's caption: {bad[:3]}"


@pytest.mark.book
@pytest.mark.parametrize("page", CHAPTERS)
def test_every_chapter_links_its_executed_notebook(browser, server, page):
    _open(browser, server, page)
    link = browser.execute_script("""
        const a = Array.from(document.querySelectorAll('main a'))
          .find(a => a.innerText.trim().startsWith('Download notebook (.ipynb)'));
        if (!a) return null;
        const box = a.getBoundingClientRect();
        return [a.getAttribute('href'), box.width > 0 && box.height > 0, box.top + window.scrollY];""")
    assert link, f"{page} has no 'Download notebook (.ipynb)' link"
    href, visible, top = link
    assert visible and top < 600, f"{page}: the notebook link is not visible under the title ({top:.0f} px)"
    target = (HTML / page).parent / href
    assert target.exists(), f"{page} links {href}, which the build did not write"
    nb = json.loads(target.read_text())
    assert nb.get("nbformat") == 4 and nb["cells"], f"{href} is not a notebook"
    stem = page.rsplit("/", 1)[-1].removesuffix(".html")
    assert target.name == f"{stem}.ipynb"
    outputs = sum(len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code")
    assert outputs > 0, f"{href} holds no outputs: not the executed notebook"


@pytest.mark.book
def test_the_reading_guide_lists_each_chapters_run_time(browser, server):
    """One row per chapter, in the book's order, each with the seconds the build measured."""
    _open(browser, server, CHAPTERS[0])
    rows = browser.execute_script("""
        return Array.from(document.querySelectorAll('table.mmcl-run-times tbody tr'))
          .map(r => [r.querySelector('a').getAttribute('href'), r.cells[1].dataset.seconds, r.cells[1].innerText]);""")
    assert [h.split("#")[0] for h, *_ in rows] == [p.rsplit("/", 1)[-1] for p in CHAPTERS]
    missing = [h for h, s, _ in rows if not s]
    assert not missing, f"chapters without a measured run time: {missing}"
    assert all(float(s) > 0 and re.fullmatch(r"\d+ s|\d+\.\d min", t) for _, s, t in rows), rows


# -- the glossary --------------------------------------------------------------------------------
GLOSSARY = "book/glossary.html"
# pages whose prose is not the book's own writing: generated from docstrings, captions and the
# bibliography, or another part's page (the Blueprint is rendered by mmcl.booksupport.blueprint_page)
NOT_PROSE = {"book/api.html", "book/figures.html", "book/references.html", "book/blueprint.html", GLOSSARY}


def _glossary_terms():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((HTML / GLOSSARY).read_text(), "html.parser")
    for a in soup.select("a.headerlink"):
        a.decompose()
    return {dt["id"]: dt.get_text(" ", strip=True).replace("\u2019", "'") for dt in soup.select("dl.glossary dt[id]")}


def _prose_uses(page, terms):
    """The terms ``page`` uses in its prose (paragraphs, list items, definitions; not code, outputs,
    tables or math), and the terms it links to the glossary.  A term of several words counts
    wherever it appears; a single word (holds, fails, valid, ...) is also ordinary English, and
    counts where the prose marks it (italic or bold)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((HTML / page).read_text(), "html.parser")
    main = soup.select_one("article") or soup
    linked = {a["href"].split("#", 1)[1] for a in main.select("a[href]")
              if a["href"].split("#")[0].endswith("glossary.html") and "#" in a["href"]}
    # not prose: code, outputs, tables, math, titles, and the words of links (they name their target)
    for bad in main.select("div.cell_output, div.cell_input, pre, code, table, span.math, div.math, "
                           "nav, div.mmcl-verdict-summary, p.admonition-title, h1, h2, h3, h4, a"):
        bad.decompose()
    prose = " ".join(e.get_text(" ", strip=True) for e in main.select("p, li, dd")).replace("\u2019", "'")
    # a single word counts where the prose marks it: an italic or bold phrase that starts with it
    marked = [e.get_text(" ", strip=True).lstrip("(\"' ") for e in main.select("p em, p strong, li em, li strong, dd em")]
    used = set()
    for anchor, term in terms.items():
        word = r"(?<![\w-])" + re.escape(term) + r"(?![\w-])"
        if (" " in term and re.search(word, prose, flags=re.I)) or \
                (" " not in term and any(re.match(word, m, flags=re.I) for m in marked)):
            used.add(anchor)
    return used, linked


@pytest.mark.book
def test_the_glossary_defines_the_books_words():
    terms = set(_glossary_terms().values())
    words = {"holds", "fails", "outside the premises", "our measurement", "holds beyond its premises",
             "root error", "inherited", "valid", "adapt", "transfer", "Sec. 3.3's nu", "Figure 1's nu",
             "code path", "sizes", "every reachable premise", "premise keys"}
    assert words <= terms, f"the glossary lacks {sorted(words - terms)}"


@pytest.mark.book
@pytest.mark.parametrize("page", [p for p in PAGES if p not in NOT_PROSE])
def test_every_page_links_the_glossary_words_it_uses(page):
    terms = _glossary_terms()
    used, linked = _prose_uses(page, terms)
    unlinked = sorted(terms[a] for a in used - linked)
    assert not unlinked, f"{page} uses, without linking the glossary, {unlinked}"


# -- the point first -----------------------------------------------------------------------------
@pytest.mark.book
@pytest.mark.parametrize("page", ["book/reading_guide.html", "book/claims.html"])
def test_the_page_opens_with_the_verdict(browser, server, html_root, page):
    """In the first 800 px of a 1280 x 800 window: the verdict, its numbers those the chapters' rows
    and the proof audit give (recomputed here)."""
    from mmcl.booksupport.claims import parse_html
    from mmcl.booksupport.findings import FINDINGS, finding_stands
    from mmcl.proofs import blueprint as bp

    rows = [r for p in CHAPTERS for r in parse_html((html_root / p).read_text())]
    stands = sum(1 for f in FINDINGS if not f.claim.startswith("Ours:") and finding_stands(f, rows))
    root = len(bp.audit_summary()["root"])
    browser.set_window_size(1280, 800)
    try:
        _open(browser, server, page)
        box = browser.execute_script("""
            const v = document.querySelector('div.mmcl-verdict-summary');
            if (!v) return null;
            const first = v.querySelector('p:nth-of-type(2)');
            return [first.getBoundingClientRect().bottom, window.innerHeight, v.dataset.stands, v.dataset.root,
                    first.innerText, v.innerText];""")
    finally:
        browser.set_window_size(1400, 1000)
    assert box, f"{page} has no verdict"
    bottom, height, n_stands, n_root, first, text = box
    assert bottom <= min(800, height), f"{page}: the verdict's first sentence ends at {bottom:.0f} px"
    assert first.startswith("What stands.") and int(n_stands) == stands, (first, n_stands, stands)
    assert int(n_root) == root and f"{root} have a root error" in text


# -- the window chapter's explorable ---------------------------------------------------------------
@pytest.mark.book
def test_the_window_slider_shows_the_frames_numbers(browser, server):
    _open(browser, server, "book/window.html")
    frames = browser.execute_script(
        "const s = document.querySelector('div.mmcl-explorable script.mmcl-frames');"
        "return s ? JSON.parse(s.textContent) : null;")
    assert frames and len(frames) >= 5, "the window chapter has no explorable with its frames"
    assert frames[-1]["cos"] == pytest.approx(1.0) and frames[0]["cos"] < 0.1
    marks = browser.execute_script("return document.querySelector('div.mmcl-explorable .mmcl-marks').innerText")
    assert "Sec. 3.3" in marks and "Figure 1" in marks
    for k in (0, len(frames) // 2, len(frames) - 1):
        shown = browser.execute_script("""
            const root = document.querySelector('div.mmcl-explorable');
            const input = root.querySelector('input[type=range]');
            input.value = arguments[0];
            input.dispatchEvent(new Event('input', {bubbles: true}));
            const out = {cos: root.querySelector('.mmcl-cos').innerText};
            root.querySelectorAll('[data-key]').forEach(c => { out[c.dataset.key] = c.innerText; });
            return out;""", k)
        cos = shown.pop("cos")  # as many digits as the page shows: half a unit of the last one
        digits = re.fullmatch(r"(\d+)\.(\d+)(?:e([-+]\d+))?", cos)
        assert digits, f"the slider shows cos(nu, mu) = {cos!r}"
        last = 10.0 ** (int(digits.group(3) or 0) - len(digits.group(2)))
        assert abs(float(cos) - frames[k]["cos"]) <= 0.5 * last * (1 + 1e-9), (k, cos, frames[k]["cos"])
        assert set(shown) == {f"{m}/{p}" for m in ("single", "multi") for p in ("adapt", "transfer")}
        for key, text in shown.items():
            assert float(text) == pytest.approx(frames[k]["errors"][key], abs=5.01e-4), (k, key, text)
