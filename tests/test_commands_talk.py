"""``mmcl talk``: the 16:9 deck of the book's takeaway figures (mmcl.figures.deck)."""
import re

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from helpers import text_problems  # noqa: E402
from mmcl.cli import main  # noqa: E402
from mmcl.figures import deck, registry  # noqa: E402
from mmcl.figures.theme import claim_of  # noqa: E402


def pdf_pages(path):
    """The page boxes ``(width, height)`` in points of a PDF, read from its ``/Type /Page``
    objects (no PDF library needed: matplotlib writes them uncompressed)."""
    raw = path.read_bytes()
    pages = re.findall(rb"/Type\s*/Page\b(?!s)(.*?)>>", raw, flags=re.S)
    boxes = []
    for body in pages:
        m = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", body)
        assert m, "a page without its /MediaBox"
        x0, y0, x1, y1 = map(float, m.groups())
        boxes.append((x1 - x0, y1 - y0))
    return boxes


def test_the_paper_reference_comes_from_citation_cff(tmp_path):
    ref = deck.paper_reference()
    assert ref["title"] == "On the Comparison between Multi-modal and Single-modal Contrastive Learning"
    assert ref["authors"].startswith("Wei Huang, Andi Han") and ref["authors"].endswith("Taiji Suzuki")
    assert ref["venue"] == "NeurIPS 2024"
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\ntitle: x\n")
    with pytest.raises(ValueError, match="no preferred-citation"):
        deck.paper_reference(tmp_path)


def test_the_deck_is_the_schematic_then_every_takeaway_in_toc_order():
    names = deck.deck_names()
    specs = registry.figures()
    takeaways = [n for n, s in specs.items() if s.takeaway]
    assert names == ["setting-model"] + takeaways
    chapters = [specs[n].chapter for n in takeaways]
    assert chapters == [c for c in registry.chapters() if c in chapters]  # _toc.yml's order
    assert len(takeaways) == len(registry.chapters())  # one per chapter


def test_mmcl_talk_writes_a_16_by_9_deck_of_readable_pages(tmp_path, capsys, monkeypatch):
    """At the tiny size: 2 + (number of takeaway figures) pages, each 16:9; every page's text
    fits and nothing overlaps (the citation line included), and each takeaway page states its
    claim."""
    seen, problems = [], {}
    real = deck.write_deck

    def check(name, fig):
        seen.append(name)
        found = text_problems(fig)
        if found:
            problems[name] = found[:4]
        if name != "title" and registry.get(name).takeaway:
            assert claim_of(fig), f"{name}: no claim in its title"

    monkeypatch.setattr(deck, "write_deck", lambda *a, **k: real(*a, on_page=check, **k))
    assert main(["talk", "--out", str(tmp_path / "deck"), "--size", "tiny"]) == 0
    path = tmp_path / "deck" / "mmcl-talk.pdf"
    assert f"wrote {path}" in capsys.readouterr().out
    takeaways = [n for n, s in registry.figures().items() if s.takeaway]
    pages = pdf_pages(path)
    assert len(pages) == 2 + len(takeaways) == len(seen)
    assert all(abs(w / h - 16 / 9) < 0.01 for w, h in pages), pages
    assert not problems, problems


def test_mmcl_talk_refuses_an_unwritable_out_before_drawing(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["talk", "--size", "tiny", "--out", "/proc/mmcl-no-such-folder/deck"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not a folder this command can write to" in err
    with pytest.raises(SystemExit):
        main(["talk", "--out", "x", "--style", "page"])
