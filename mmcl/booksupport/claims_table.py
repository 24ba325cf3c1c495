"""How the claims register's rows are shown and read back.

In a notebook the claims of a cell are shown after it as a small
table (an IPython ``post_execute`` hook).  The table's HTML carries the rows as JSON
(``data-mmcl-claims``); the book's Sphinx extension (:mod:`mmcl.booksupport.sphinx_ext`) reads
them from every executed chapter and builds the "Claims" page.  The rows are :class:`~mmcl.booksupport.claims.Claim` objects of :mod:`mmcl.booksupport.claims`.
"""
from __future__ import annotations

import html
import json
import math
import re
from dataclasses import asdict
from typing import Dict, List, Sequence

from mmcl.proofs.blueprint import VERDICT_TEXT

__all__ = ["ATTR", "format_number", "render_html", "render_text", "parse_html", "fold_summary"]

#: The HTML attribute of a claims table that carries its rows as JSON.
ATTR = "data-mmcl-claims"


def format_number(x) -> str:
    """``x`` as a table shows it: an integer plainly, else three significant digits (in scientific
    notation below 1e-3 and from 1e4); ``None`` as an empty cell."""
    if x is None:
        return ""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return str(x)
    x = float(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    a = abs(x)
    if a >= 1e4 or a < 1e-3:
        return f"{x:.2e}"
    return f"{x:.3g}"


def _row_dict(r) -> dict:
    d = asdict(r)
    d["bound_text"] = r.bound_text()
    return d


def render_text(rows: Sequence) -> str:
    """The rows (:class:`~mmcl.booksupport.claims.Claim`) as plain text (what a terminal shows)."""
    lines = []
    for r in rows:
        lines.append(f"[{VERDICT_TEXT[r.verdict]}] {r.paper}: {r.claim} -- observed {format_number(r.observed)}"
                     f" ({r.bound_text()})" + (f" over {r.size} values" if r.size > 1 else "")
                     + (f"; failing premises: {r.failing}" if r.failing else ""))
    return "\n".join(lines)


def render_html(rows: Sequence) -> str:
    """The rows as an HTML table carrying their JSON (read back by :func:`parse_html`)."""
    data = html.escape(json.dumps([_row_dict(r) for r in rows]), quote=True)
    body = "".join(
        f"<tr><td>{html.escape(r.paper)}</td><td>{html.escape(r.claim)}</td>"
        f"<td class='mmcl-verdict mmcl-{r.verdict}'>{VERDICT_TEXT[r.verdict]}"
        + (f"<br><small>fails here: {html.escape(r.failing)}</small>" if r.failing else "") + "</td>"
        f"<td>{format_number(r.observed)}{' (worst of ' + str(r.size) + ')' if r.size > 1 else ''}</td>"
        f"<td>{html.escape(r.bound_text())}</td></tr>" for r in rows)
    table = (f"<table class='mmcl-claims table' {ATTR}=\"{data}\"><thead><tr><th>paper</th><th>claim</th>"
             f"<th>verdict</th><th>observed</th><th>bound</th></tr></thead><tbody>{body}</tbody></table>")
    summary = f"<b>Claims register</b>: {html.escape(fold_summary(rows))}"
    return f"<details class='mmcl-claims-fold'><summary>{summary}</summary>{table}</details>"


#: How :func:`fold_summary` counts each verdict ("3 hold, 1 fails where ...").
_COUNTED = {"holds": "hold", "reach-holds": "hold where every reachable premise holds",
            "beyond": "hold beyond their premises", "fails": "fail",
            "reach-fails": "fail where every reachable premise holds", "outside": "outside the premises",
            "observation": "our measurements"}


def fold_summary(rows: Sequence) -> str:
    """The one line a folded claims table shows: how many claims, and how many of each verdict,
    e.g. ``"14 claims checked: 9 hold, 3 fail, 2 observations"`` (the table is one click away)."""
    counts: Dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    parts = ", ".join(f"{counts[v]} {_COUNTED[v]}" for v in _COUNTED if v in counts)
    return f"{len(rows)} claim{'s' if len(rows) != 1 else ''} checked: {parts}"


_ATTR_RE = re.compile(ATTR + r'="([^"]*)"')


def parse_html(text: str) -> List[dict]:
    """The rows carried by every claims table in ``text`` (the inverse of :func:`render_html`)."""
    out = []
    for m in _ATTR_RE.finditer(text):
        out.extend(json.loads(html.unescape(m.group(1))))
    return out
