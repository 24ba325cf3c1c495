"""How a chapter reads: the story first, the audit folded, code that fits the page.

Every chapter after the reading guide opens with a three-sentence takeaway and the one figure that
carries it; its checks (the code that asserts every claim, and the register table they print) sit
in folded cells, the last of them under an "Audit" heading; the code a reader sees fits the book's
column and each visible cell is short enough to implement the sentence above it; and the chapter
offers one or two "Try it" prompts. These rules are what `book/README.md` asks of a chapter.
"""
import re
from pathlib import Path

import jupytext
import pytest

from mmcl.figures import registry

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = [ROOT / "book" / f"{c}.md" for c in registry.chapters()]  # _toc.yml's order
STORY = [ch for ch in CHAPTERS if ch.stem != "reading_guide"]  # the guide opens with its findings
COLUMN = 88  # characters of code the book's column shows without clipping
VISIBLE_LINES = 30  # the most lines a visible code cell may have
FOLDED = {"hide-input", "hide-cell"}
REMOVED = {"remove-input", "remove-cell"}
CHECK = re.compile(r"\bclaims\.\w+\(")
SHOW = re.compile(r"env\.show\([^\n]*?\"([a-z0-9\-]+)\"\s*,?\s*\)", flags=re.S)
ADMONITION = re.compile(r"^(`{3,}|:{3,})\{admonition\} (Takeaway|Try it)[^\n]*\n(.*?)^\1", flags=re.S | re.M)


def _cells(path: Path):
    return jupytext.read(path).cells


def _tags(cell):
    return set(cell.metadata.get("tags", []))


def _admonitions(path: Path, kind: str):
    """The bodies of the chapter's ``{admonition} kind`` blocks (options dropped)."""
    text = path.read_text()
    return ["\n".join(ln for ln in m.group(3).splitlines() if not ln.startswith(":"))
            for m in ADMONITION.finditer(text) if m.group(2) == kind]


def sentences(text: str):
    """The sentences of a paragraph of MyST: maths, roles and code spans count as words, and a
    full stop ends a sentence only when a capital letter (or an opening mark) follows."""
    text = re.sub(r"\$[^$]*\$", "X", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", "X", text)
    text = re.sub(r"`[^`]*`", "X", text)
    text = " ".join(text.split())
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*(\"'])", text) if s.strip()]


def test_the_sentence_counter_ignores_abbreviations_and_maths():
    assert len(sentences("Eq. 9 gives $x. Y$ here. Then {ref}`sec-a.b` follows. End.")) == 3
    assert len(sentences("One sentence, e.g. with an example.")) == 1


@pytest.mark.parametrize("chapter", STORY, ids=lambda p: p.stem)
def test_a_chapter_opens_with_a_three_sentence_takeaway(chapter):
    bodies = _admonitions(chapter, "Takeaway")
    assert len(bodies) == 1, f"{chapter.name}: one ```{{admonition}} Takeaway``` block, found {len(bodies)}"
    text = chapter.read_text()
    first_code = text.index("```{code-cell}")
    assert text.index("{admonition} Takeaway") < first_code, f"{chapter.name}: the takeaway comes before any code"
    n = len(sentences(bodies[0]))
    assert n == 3, f"{chapter.name}: the takeaway has {n} sentences, not three: {bodies[0]!r}"


@pytest.mark.parametrize("chapter", STORY, ids=lambda p: p.stem)
def test_the_takeaway_figure_is_shown_first(chapter):
    marked = [n for n, s in registry.figures().items() if s.chapter == chapter.stem and s.takeaway]
    assert len(marked) == 1, f"{chapter.name}: exactly one FigureSpec(takeaway=True), found {marked}"
    text = chapter.read_text()
    shows = list(SHOW.finditer(text))
    assert shows, f"{chapter.name}: shows no figure"
    first = shows[0]
    assert first.group(1) == marked[0], (
        f"{chapter.name}: the first figure shown is {first.group(1)!r}, not the takeaway figure {marked[0]!r}")
    heading = re.search(r"^## ", text, flags=re.M)
    assert heading is None or first.start() < heading.start(), (
        f"{chapter.name}: the takeaway figure is shown after the first section heading")


@pytest.mark.parametrize("chapter", STORY, ids=lambda p: p.stem)
def test_checks_are_folded_and_the_chapter_ends_with_its_audit(chapter):
    cells = _cells(chapter)
    checks = [i for i, c in enumerate(cells) if c.cell_type == "code" and CHECK.search(c.source)]
    assert checks, f"{chapter.name}: no check cell"
    shown = [i for i in checks if not _tags(cells[i]) & FOLDED]
    assert not shown, f"{chapter.name}: check cells {shown} are not folded (tag them hide-input)"
    audit = [i for i, c in enumerate(cells) if c.cell_type == "markdown"
             and re.search(r"^## Audit", c.source, flags=re.M)]
    assert audit, f"{chapter.name}: no '## Audit' section"
    assert checks[-1] > audit[-1], f"{chapter.name}: the last check cell is not under '## Audit'"
    later = [c.source for c in cells[audit[-1]:] if c.cell_type == "markdown"]
    assert not any(re.search(r"^## ", s, flags=re.M) for s in later[1:]), (
        f"{chapter.name}: a section follows the Audit; the Audit closes the chapter")


@pytest.mark.parametrize("chapter", STORY, ids=lambda p: p.stem)
def test_one_or_two_try_it_prompts(chapter):
    n = len(_admonitions(chapter, "Try it"))
    assert 1 <= n <= 2, f"{chapter.name}: {n} ```{{admonition}} Try it``` blocks; give one or two"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_code_fits_the_column(chapter):
    long = [f"cell {i}: {ln.strip()[:60]}... ({len(ln)})" for i, c in enumerate(_cells(chapter))
            if c.cell_type == "code" and not _tags(c) & REMOVED
            for ln in c.source.splitlines() if len(ln) > COLUMN]
    assert not long, f"{chapter.name}: {len(long)} code lines longer than {COLUMN}: {long[:5]}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_visible_cells_are_short(chapter):
    tall = [(i, n) for i, c in enumerate(_cells(chapter))
            if c.cell_type == "code" and not _tags(c) & (FOLDED | REMOVED)
            and (n := sum(1 for ln in c.source.splitlines() if ln.strip())) > VISIBLE_LINES]
    assert not tall, f"{chapter.name}: visible cells (index, lines) longer than {VISIBLE_LINES}: {tall}"
