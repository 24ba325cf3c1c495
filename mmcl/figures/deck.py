"""A talk's slides from the book's figures: ``mmcl talk --out DIR`` writes ``DIR/mmcl-talk.pdf``.

A 16:9 deck (:data:`mmcl.figures.theme.TALK_SIZE`, one figure a page, drawn with ``--style talk``):
a title page (the paper's title, authors and venue, read from ``CITATION.cff``, and "figures from
mmcl"), the model's diagram (``setting-model``), then each chapter's takeaway figure in the order
of ``_toc.yml``, titled by its claim (:func:`mmcl.figures.theme.claim_of`), with a citation line at
the foot of every page.

* :func:`paper_reference` -- the paper's title, authors, venue and year from ``CITATION.cff``;
* :func:`deck_names` -- the registered figures of the deck, in order;
* :func:`draw_title_page` -- the title page;
* :func:`write_deck` -- draw every page and write the PDF.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Optional

from mmcl.figures import palette
from mmcl.figures.theme import TALK_SIZE, claim_of, style, talk

__all__ = ["DECK_FILE", "SCHEMATIC", "FOOT", "FOOT_TYPE", "paper_reference", "deck_names", "citation_line", "draw_title_page",
           "write_deck"]

#: The deck's file name inside ``--out``.
DECK_FILE = "mmcl-talk.pdf"
#: The figure after the title page: the model (registered by the setting chapter).
SCHEMATIC = "setting-model"
_METADATA = {"Creator": "mmcl", "CreationDate": None}


def _citation_file(root=None) -> Path:
    """``CITATION.cff`` in ``root``, default the checkout that holds this package (beside
    ``_toc.yml``), else the one above the current directory."""
    if root is not None:
        return Path(root) / "CITATION.cff"
    beside = Path(__file__).resolve().parents[2] / "CITATION.cff"
    if beside.exists():
        return beside
    from mmcl._utils import repo_root

    return repo_root() / "CITATION.cff"


def paper_reference(root=None) -> Dict[str, str]:
    """The paper the book accompanies, from ``preferred-citation`` of ``CITATION.cff`` (in ``root``,
    default the checkout's): ``title``, ``authors`` (given and family names, comma-separated),
    ``short_authors`` (family names), ``venue`` and ``year``.  Read line by line (no YAML library);
    a ValueError names the file and the field it lacks."""
    path = _citation_file(root)
    if not path.exists():
        raise ValueError(f"no CITATION.cff at {path}: the title page reads the paper's reference there")
    text = path.read_text()
    block = text.split("preferred-citation:", 1)
    if len(block) < 2:
        raise ValueError(f"{path} has no preferred-citation: the title page reads the paper's reference there")
    body = re.split(r"^\S", block[1], maxsplit=1, flags=re.M)[0]  # up to the next top-level key

    def field(name: str) -> str:
        m = re.search(rf"^\s+{name}:\s*\"?(.+?)\"?\s*$", body, flags=re.M)
        if not m:
            raise ValueError(f"{path}: preferred-citation has no {name}")
        return m.group(1)

    family = re.findall(r"family-names:\s*\"?(.+?)\"?\s*$", body, flags=re.M)
    given = re.findall(r"given-names:\s*\"?(.+?)\"?\s*$", body, flags=re.M)
    if not family or len(family) != len(given):
        raise ValueError(f"{path}: preferred-citation lists no authors (family-names and given-names)")
    venue = field("collection-title")
    year = field("year")
    short = "NeurIPS" if "Neural Information Processing Systems" in venue else venue
    return {"title": field("title"), "authors": ", ".join(f"{g} {f}" for g, f in zip(given, family)),
            "short_authors": ", ".join(family), "venue": f"{short} {year}", "year": year}


def deck_names() -> List[str]:
    """The registered figures of the deck after the title page, in order: the model's diagram,
    then every chapter's takeaway figure in ``_toc.yml``'s order."""
    from mmcl.figures.registry import figures

    specs = figures()
    if SCHEMATIC not in specs:
        raise ValueError(f"the deck opens with the figure {SCHEMATIC!r}, which no chapter registers")
    return [SCHEMATIC] + [name for name, spec in specs.items() if spec.takeaway]


def citation_line(ref: Dict[str, str], name: Optional[str] = None) -> str:
    """The line at the foot of a page: the paper's authors and venue (the title page gives its
    title), and the command that redraws the figure, ``mmcl figure NAME``."""
    line = f"{ref['short_authors']}, {ref['venue']}"
    return line + (f"  ·  figure: mmcl figure {name}" if name else "  ·  figures from mmcl")


def draw_title_page(ref: Dict[str, str]):
    """The deck's title page, 16:9: the paper's title, its authors and venue, and "figures from
    mmcl"."""
    import matplotlib.pyplot as plt

    with talk(), style():
        fig = plt.figure(figsize=TALK_SIZE, layout="none")
        fig.text(0.5, 0.64, ref["title"], ha="center", va="center", fontsize="xx-large", wrap=True,
                 color=palette.INK, fontweight="bold")
        fig.text(0.5, 0.46, ref["authors"], ha="center", va="center", fontsize="large", color=palette.INK)
        fig.text(0.5, 0.38, ref["venue"], ha="center", va="center", fontsize="large", color=palette.PAPER_GREY)
        fig.text(0.5, 0.18, "figures from mmcl", ha="center", va="center", fontsize="medium",
                 color=palette.MULTI)
    return fig


#: The strip at the foot of a page that the citation line takes (a fraction of the height).
FOOT = 0.05
#: The citation line's size, points: readable on a slide, and smaller than the figure's own type.
FOOT_TYPE = 12


def _with_citation(fig, line: str) -> None:
    """Make room at the foot of ``fig`` and write the citation line there.  Its constrained layout
    is solved once above the strip and then frozen; a figure legend placed "outside" (anchored on
    the whole figure, where the layout only reserves its room) is then anchored above the strip,
    into the room reserved for it, so that it never sits on the line."""
    from matplotlib.transforms import Bbox

    engine = fig.get_layout_engine()
    if engine is not None and "rect" in engine.get():
        engine.set(rect=(0, FOOT, 1, 1 - FOOT))
        fig.draw_without_rendering()  # solve the layout above the strip
        fig.set_layout_engine("none")  # and keep it
        above = Bbox.from_bounds(0, FOOT, 1, 1 - FOOT)
        for legend in fig.legends:
            if getattr(legend, "_outside_loc", None) and legend._bbox_to_anchor is None:
                legend.set_bbox_to_anchor(above, transform=fig.transFigure)
    fig.text(0.5, FOOT / 3, line, ha="center", va="bottom", fontsize=FOOT_TYPE, color=palette.PAPER_GREY)


def write_deck(out_dir, size: str = "default", device: Optional[str] = None, progress=None,
               on_page=None) -> Path:
    """Draw the deck at ``size`` and write ``out_dir/mmcl-talk.pdf`` (one page per figure, 16:9);
    returns its path.  ``progress(name)`` is called before each figure is drawn, and
    ``on_page(name, fig)`` with each finished page before it is written (``name`` ``"title"`` for
    the title page), e.g. to check it."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    from mmcl.figures.registry import get, make

    ref = paper_reference()
    path = Path(out_dir) / DECK_FILE
    with PdfPages(path, metadata=_METADATA) as pdf:
        fig = draw_title_page(ref)
        try:
            with talk(), style():
                _with_citation(fig, citation_line(ref))
                if on_page:
                    on_page("title", fig)
                pdf.savefig(fig)
        finally:
            plt.close(fig)
        for name in deck_names():
            if progress:
                progress(name)
            fig = make(name, size, device, style="talk")
            try:
                if get(name).takeaway and not claim_of(fig):
                    raise RuntimeError(f"the takeaway figure {name!r} states no claim in its title")
                with talk(), style():
                    _with_citation(fig, citation_line(ref, name))
                    if on_page:
                        on_page(name, fig)
                    pdf.savefig(fig)
            finally:
                plt.close(fig)
    return path
