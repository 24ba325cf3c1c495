"""The reading guide's map "How the book maps to the paper", generated: one row per chapter.

Nothing is typed: the chapters and their parts come from ``_toc.yml``
(:func:`mmcl.figures.registry.toc_entries`), each chapter's title from its page, and the paper's
statements a chapter is about from the claims register's rows of its executed checks
(:mod:`mmcl.booksupport.claims`): every statement a check of the chapter names, in the paper's
order, with the statements of other works last.  The Sphinx extension
(:mod:`mmcl.booksupport.sphinx_ext`) puts the table where the reading guide says
``{mmcl-chapter-map}``, so a new chapter appears in it by its entry in the toc.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import html
import re
from collections import defaultdict
from typing import Callable, Dict, Iterable, List, Mapping, Sequence, Tuple

from mmcl.booksupport.claims import MAIN

__all__ = ["statement_name", "statement_key", "statements_text", "render_chapter_map"]

_ORDER = ["Sec.", "Eq.", "Eqs.", "Assumption", "Condition", "Definition", "Theorem", "Corollary", "Lemma",
          "Proposition", "Appendix", "Figure", "Table"]
_PLURAL = {"Sec.": "Secs.", "Eq.": "Eqs.", "Eqs.": "Eqs.", "Corollary": "Corollaries", "Appendix": "Appendices"}


def statement_name(paper: str) -> str:
    """The statement a row is about: ``"Theorem 4.2 (1)"`` -> ``"Theorem 4.2"``, ``"Lemma C.11"``
    -> itself; text that names no numbered statement is kept whole."""
    m = re.match(r"^(\S+ \(?(?:[A-Z]\.)?\d+(?:\.\d+)*\)?)", paper)
    return m.group(1) if m else paper


def statement_key(paper: str):
    """Sort the paper's statements in reading order: sections, equations, assumptions, theorems,
    then lemmas (main text, then appendices B, C, D), figures, tables."""
    head, _, rest = paper.partition(" ")
    rank = _ORDER.index(head) if head in _ORDER else len(_ORDER)
    m = re.match(r"\(?(?:([A-Z])\.)?(\d+(?:\.\d+)*)", rest)
    letter, nums = (m.group(1) or "", tuple(int(x) for x in m.group(2).split("."))) if m else ("~", ())
    return (rank, letter, nums, paper)


def statements_text(papers: Iterable[str]) -> str:
    """``["Lemma 5.2", "Theorem 4.2 (1)", "Lemma 5.1"]`` -> ``"Theorem 4.2; Lemmas 5.1, 5.2"``: the
    statements once each, in the paper's order, grouped by kind."""
    names = sorted({statement_name(p) for p in papers}, key=statement_key)
    groups: Dict[str, List[str]] = {}
    for name in names:
        head, _, rest = name.partition(" ")
        if not rest or not re.match(r"\(?(?:[A-Z]\.)?\d", rest):
            groups.setdefault(name, [])
        else:
            groups.setdefault(head, []).append(rest)
    out = []
    for head, numbers in groups.items():
        if not numbers:
            out.append(head)
        else:
            word = head if len(numbers) == 1 else _PLURAL.get(head, head + "s")
            out.append(f"{word} {', '.join(numbers)}")
    return "; ".join(out)


def render_chapter_map(chapters: Sequence[Tuple[str, str]], titles: Mapping[str, str],
                       hrefs: Mapping[str, str], rows: Iterable[Mapping],
                       cite: Callable[[str], str] = lambda key: key) -> str:
    """The map as an HTML table: ``chapters`` are ``(part caption, docname)`` pairs in the book's
    order, ``titles`` and ``hrefs`` each chapter's title and link, ``rows`` the claims register's
    rows (dicts with ``docname``, ``paper`` and ``source``, as the Sphinx extension collects them)
    and ``cite(key)`` the author-year name of another work."""
    papers: Dict[str, Dict[str, List[str]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        papers[r["docname"]][r.get("source", MAIN)].append(r["paper"])
    out = ["<table class='mmcl-chapter-map table'><thead><tr><th>part</th><th>chapter</th>"
           "<th>the statements its checks test</th></tr></thead><tbody>"]
    last = None
    for caption, doc in chapters:
        title = html.escape(titles.get(doc, doc))
        if doc in hrefs:
            title = f"<a class='reference internal' href='{html.escape(hrefs[doc], quote=True)}'>{title}</a>"
        by_source = papers.get(doc, {})
        parts = [statements_text(by_source[MAIN])] if by_source.get(MAIN) else []
        parts += [f"{cite(src)}: {statements_text(ps)}" for src, ps in sorted(by_source.items()) if src != MAIN]
        what = html.escape("; ".join(parts)) if parts else "&ndash;"
        part = html.escape(caption) if caption != last else ""
        last = caption
        out.append(f"<tr><td>{part}</td><td>{title}</td><td>{what}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)
