"""No measured number typed by hand: in every executed chapter, a number of the prose that
follows a word of approximation ("about 0.07") and that the chapter's own run prints is glued
from the run instead ({glue:text}, `env.number`), so prose, tables and figures cannot disagree."""
import json

import pytest

from bookpages import ROOT, _require_book
from mmcl.booksupport.numbers import hand_typed
from mmcl.figures.registry import chapters

EXECUTED = ROOT / "_build" / "jupyter_execute" / "book"


@pytest.mark.parametrize("chapter", chapters(ROOT))
def test_no_measured_number_is_typed_by_hand(chapter):
    _require_book()
    notebook = EXECUTED / f"{chapter}.ipynb"
    assert notebook.exists(), f"the build wrote no executed copy of {chapter}"
    found = hand_typed(json.loads(notebook.read_text()))
    assert not found, f"{chapter}: glue these from the run: " + "; ".join(map(str, found))
