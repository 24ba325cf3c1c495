"""Numbers in a chapter's prose that its run computes: found, so that none is typed by hand.

A chapter writes a measured number into its prose with myst-nb's glue: a code cell computes it
and calls ``env.number("key", value)`` (:meth:`mmcl.booksupport.BookEnv.number`), and the prose
writes ``{glue:text}`key:.2f``` where it would have typed the digits.  The rendered page then
shows what this build measured, so prose, tables and figures cannot disagree.

:func:`hand_typed` finds the numbers that slipped through: in the markdown of an executed notebook,
a number that follows a word of approximation ("about 0.07", "near 1.8", "a factor of about 18")
and that a code cell of the same notebook also prints, to the digits the prose shows.  Quoted
text (the paper's own words, in double quotes) and mathematics are left alone.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

__all__ = ["HandTyped", "hand_typed", "printed_values", "prose_numbers"]

#: The words after which a number is a measurement read off a run, not a setting or a label.
APPROX = r"(?:about|around|roughly|nearly|near|approximately|close to|~)"
_NUMBER_AFTER_APPROX = re.compile(
    APPROX + r"\s+(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?![\w/])(?P<pct>\s*%)?",
    flags=re.IGNORECASE,
)
_PRINTED = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class HandTyped:
    """A number typed in prose that the run also prints."""

    text: str  # the number as typed, e.g. "0.07"
    context: str  # the sentence around it

    def __str__(self) -> str:
        return f"{self.text!r} in '...{self.context}...'"


def _strip(markdown: str) -> str:
    """The prose of a markdown cell: no code, mathematics, quotations, link targets or options."""
    t = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    t = re.sub(r"\$\$.*?\$\$", " ", t, flags=re.S)
    t = re.sub(r"\$[^$\n]*\$", " ", t)
    t = re.sub(r"`[^`]*`", " ", t)  # code spans and roles' targets, {glue:text} included
    t = re.sub(r"\]\([^)]*\)", "]", t)
    t = re.sub(r'"[^"\n]*"', " ", t)  # the paper's words, quoted
    t = re.sub(r"“[^”\n]*”", " ", t)
    t = re.sub(r"^:[a-z-]+:.*$", " ", t, flags=re.M)
    return t


def prose_numbers(markdown: str) -> list[tuple[str, int, bool, str]]:
    """``(number as typed, digits after the point, percent?, context)`` for every number after
    a word of approximation in ``markdown``'s prose."""
    t = _strip(markdown)
    out = []
    for m in _NUMBER_AFTER_APPROX.finditer(t):
        frac = m.group("frac")
        typed = m.group("num") + ("." + frac if frac else "")
        ctx = " ".join(t[max(0, m.start() - 50): m.end() + 20].split())
        out.append((typed, len(frac) if frac else 0, bool(m.group("pct")), ctx))
    return out


def printed_values(cells) -> list[float]:
    """Every number a notebook's code cells print or display (text, HTML stripped of tags)."""
    texts = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        for o in cell.get("outputs", []):
            if "text" in o:
                texts.append("".join(o["text"]))
            for kind in ("text/plain", "text/html", "text/markdown"):
                data = o.get("data", {}).get(kind)
                if data:
                    texts.append(re.sub(r"<[^>]+>", " ", html.unescape("".join(data))))
    values = []
    for m in _PRINTED.finditer("\n".join(texts)):
        try:
            values.append(float(m.group().replace(",", "")))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            continue
    return values


def _shows(printed: float, value: float, digits: int, percent: bool) -> bool:
    """Whether the typed ``value`` (``digits`` after the point) is ``printed`` rounded.

    A whole number typed in prose ("about 41") is matched only by a printed number with a
    fractional part (41.3), or by a fraction printed as a share when the prose says "%"
    (0.93 for "about 93 %"): whole numbers printed as counts (steps, seeds) match by chance, and a
    typed 0 or 1 ("a slope near 1") names a landmark that some printed number always rounds to."""
    if percent and abs(printed) <= 1 and round(100 * printed, digits) == value:
        return True
    if digits == 0 and (value in (0, 1) or float(printed).is_integer()):
        return False  # "near 1", "close to 0": a landmark (unity, zero), not a reading
    return abs(printed - value) < 1 and round(printed, digits) == value


def hand_typed(notebook: dict) -> list[HandTyped]:
    """The numbers of ``notebook``'s prose (after a word of approximation) that its code cells
    also print to the digits the prose shows: each should be glued from the run instead."""
    cells = notebook.get("cells", [])
    printed = printed_values(cells)
    found = []
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        for typed, digits, percent, ctx in prose_numbers("".join(cell.get("source", ""))):
            value = float(typed.replace(",", ""))
            if any(_shows(p, value, digits, percent) for p in printed):
                found.append(HandTyped(typed, ctx))
    return found
