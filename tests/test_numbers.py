"""Numbers in the prose come from the runs: the finder of hand-typed numbers, the glue, and
the chapters' use of them (the executed notebooks are checked in tests/book/test_numbers_glued.py).
"""
import re
from pathlib import Path

import jupytext
import pytest

from mmcl.booksupport import BookEnv
from mmcl.booksupport.numbers import hand_typed, printed_values, prose_numbers
from mmcl.figures import registry

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = [ROOT / "book" / f"{c}.md" for c in registry.chapters()]
GLUED = re.compile(r"\{glue:text\}`([a-z0-9_-]+)(?::[^`]*)?`")
NUMBER = re.compile(r"env\.number\(\s*f?\"([a-z0-9_{}-]+)\"")


def _notebook(prose: str, printed: str) -> dict:
    return {"cells": [
        {"cell_type": "code", "source": "print(x)",
         "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}]},
        {"cell_type": "markdown", "source": prose},
    ]}


def test_a_number_typed_after_about_that_the_run_prints_is_found():
    found = hand_typed(_notebook("The error is about 0.07 here.", "error 0.0674\n"))
    assert [h.text for h in found] == ["0.07"]


def test_glued_quoted_mathematical_and_unprinted_numbers_are_not_found():
    printed = "error 0.0674, ratio 17.89, share 0.933\n"
    for prose in ("The error is about {glue:text}`err:.2f` here.",  # glued
                  'The paper says "about 0.07" there.',  # the paper's words
                  "It is $\\approx 0.07$.",  # mathematics
                  "It is about 0.5 here."):  # printed nowhere
        assert hand_typed(_notebook(prose, printed)) == [], prose


def test_whole_numbers_match_only_a_fraction_printed_or_a_share_as_percent():
    assert [h.text for h in hand_typed(_notebook("about 18 times", "ratio 17.89"))] == ["18"]
    assert hand_typed(_notebook("about 18 times", "step 18")) == []  # a count
    assert hand_typed(_notebook("a slope near 1 and close to 0", "slope 0.97, 0.02")) == []  # landmarks
    assert [h.text for h in hand_typed(_notebook("about 93 % of", "acc 0.933"))] == ["93"]


def test_prose_numbers_reads_digits_percent_and_thousands():
    got = prose_numbers("near 1,200 steps and about 7 % and roughly 0.25.")
    assert [(t, d, p) for t, d, p, _ in got] == [("1,200", 0, False), ("7", 0, True),
                                                 ("0.25", 2, False)]


def test_printed_values_reads_text_and_html_outputs():
    cells = [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {"text/html": "<td>1.5</td><td>2e-3</td>"}}]}]
    assert printed_values(cells) == [1.5, 0.002]


def test_env_number_stores_the_value_and_refuses_bad_keys_and_values(tmp_path):
    env = BookEnv(device="cpu", full=False, figure_dir=tmp_path)
    assert env.number("ds_ratio", 17.89) == 17.89 and env.numbers == {"ds_ratio": 17.89}
    with pytest.raises(ValueError, match="key"):
        env.number("Bad Key", 1.0)
    with pytest.raises(ValueError, match="finite"):
        env.number("nan_value", float("nan"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_glued_number_is_computed_in_the_chapter(chapter):
    """Each ``{glue:text}`key``` of the prose has its ``env.number("key", ...)`` in a code cell
    of the same chapter (a key built with an f-string counts by its pattern, a key passed as a
    variable by the string literal that names it)."""
    cells = jupytext.read(chapter).cells
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    keys = NUMBER.findall(code)
    if "env.number(" in code:
        keys += re.findall(r"\"([a-z][a-z0-9_]*)\"", code)
    patterns = [re.compile(re.sub(r"\\\{[^}]*\\\}", "[a-z0-9]+", re.escape(k)) + "$")
                for k in keys]
    for key in GLUED.findall(chapter.read_text()):
        assert any(p.match(key) for p in patterns), f"{chapter.name}: {key!r} is glued, never computed"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_a_cell_that_glues_does_not_check_its_output(chapter):
    """nbval compares the output of a cell marked NBVAL_CHECK_OUTPUT under a second code path;
    a glued number is an output whose last digits move with the code path."""
    for cell in jupytext.read(chapter).cells:
        if cell.cell_type == "code" and "env.number(" in cell.source:
            assert "NBVAL_CHECK_OUTPUT" not in cell.source, chapter.name
