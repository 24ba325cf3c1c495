"""One palette (mmcl.figures.palette): no figure module writes a colour literal in a call, and the
verdicts' colours are never a data series' colour."""
import ast
from pathlib import Path

import pytest
from matplotlib.colors import is_color_like, to_hex

from mmcl.figures import palette, theme

FIGURES = Path(__file__).resolve().parent.parent / "mmcl" / "figures"
# the palette itself
EXEMPT_FILES = {"palette.py"}
EXEMPT_FUNCTIONS = set()
# keyword arguments that take a colour in matplotlib's calls
COLOUR_KEYWORDS = {"color", "c", "fc", "ec", "facecolor", "edgecolor", "mfc", "mec", "markerfacecolor",
                   "markeredgecolor", "ecolor", "colors", "hatch_color"}


def _is_literal_colour(value: str) -> bool:
    """'#hex' and 'C0'-style cycle references are colours wherever they are written."""
    v = value.strip()
    return (v.startswith("#") and is_color_like(v)) or (len(v) == 2 and v[0] == "C" and v[1].isdigit())


def colour_literals(source: str, filename: str = "<figure module>"):
    """``(line, text)`` of every colour literal written in a call of ``source``: a string given to
    a colour keyword (``color="k"``, ``ec="white"``, ``"0.7"``) or any '#hex' / 'C0' string in a
    call's arguments; the functions of :data:`EXEMPT_FUNCTIONS` skipped."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (Path(filename).name, node.name) in EXEMPT_FUNCTIONS:
            skip |= {id(n) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            for sub in ast.walk(kw.value):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    named = kw.arg in COLOUR_KEYWORDS and sub.value.lower() != "none" and is_color_like(sub.value)
                    if named or _is_literal_colour(sub.value):
                        found.append((sub.lineno, f"{kw.arg}={sub.value!r}"))
        for arg in node.args:
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _is_literal_colour(sub.value):
                    found.append((sub.lineno, repr(sub.value)))
    return sorted(set(found))


def test_the_check_finds_colour_literals():
    src = ('ax.plot(x, y, color="k")\nax.bar(x, y, color=("#123456" if a else "C1"))\n'
           'fig.legend(handles=[Patch(ec="white")])\nax.axhline(0, color=palette.INK)\n'
           'ax.text(0, 0, "1")\nax.plot(x, y, "o--", label="#3 of them", mfc="none")\n')
    assert [line for line, _ in colour_literals(src)] == [1, 2, 2, 3]


def test_no_figure_module_writes_a_colour_literal():
    offenders = {}
    for path in sorted(FIGURES.glob("*.py")):
        if path.name in EXEMPT_FILES:
            continue
        found = colour_literals(path.read_text(), path.name)
        if found:
            offenders[path.name] = found[:6]
    assert not offenders, f"colour literals in figure modules (read them from mmcl.figures.palette): {offenders}"


def test_verdict_colours_are_never_data_colours():
    data = {to_hex(c) for c in palette.DATA}
    verdicts = {to_hex(c) for c in palette.VERDICT.values()}
    assert len(data) == len(palette.DATA), "two data series share a colour"
    assert not data & verdicts, f"verdict colours used for data: {sorted(data & verdicts)}"
    assert not {to_hex(c) for c in palette.NEUTRAL} & verdicts
    assert {"holds", "fails", "outside", "observation"} <= set(palette.VERDICT)
    # the theme's roles and the Blueprint's strokes read the palette
    assert theme.COLORS["single"] == palette.SINGLE and theme.COLORS["multi"] == palette.MULTI
    assert theme.COLORS["reference"] == palette.PAPER_GREY
    assert palette.BLUEPRINT["refuted"] == palette.VERDICT["fails"]  # red means fails everywhere
    assert not {to_hex(c) for c in palette.BLUEPRINT.values()} & (data - {to_hex(palette.BACKGROUND)})
    assert set(theme.COLORS.values()) <= set(palette.DATA) | {palette.PAPER_GREY}


@pytest.mark.parametrize("name", ["SINGLE", "MULTI", "SIGNAL", "NOISE", "PAPER_GREY"])
def test_the_palette_names_each_role_once(name):
    assert is_color_like(getattr(palette, name))
