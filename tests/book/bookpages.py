"""Where the built book is and which pages it should have (shared by conftest.py and the tests)."""
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


def _require_book():
    if not (HTML / "index.html").exists():
        msg = "the book is not built (run bash scripts/build_book.sh)"
        if os.environ.get("MMCL_REQUIRE_BOOK") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


def toc_pages():
    """HTML pages of every file in _toc.yml, relative to _build/html."""
    toc = (ROOT / "_toc.yml").read_text()
    names = re.findall(r"^\s*(?:root|-\s*file|file):\s*(\S+)\s*$", toc, flags=re.M)
    return [n + ".html" for n in names]


def chapter_pages():
    """HTML pages of the book's chapters (the notebooks of _toc.yml, the reading guide first)."""
    from mmcl.figures.registry import chapters

    return [f"book/{c}.html" for c in chapters(ROOT)]


