"""The README and the reading guide say the same about opening a chapter as a notebook: in Jupyter
(Open With -> Jupytext Notebook) or as exported .ipynb, on a remote server through an SSH tunnel,
with the environment variables the chapters read set before the server starts."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^## {re.escape(heading)}[^\n]*\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"no section {heading!r}"
    return m.group(1)


def _variables_the_chapters_read():
    src = (ROOT / "mmcl" / "booksupport" / "__init__.py").read_text()
    names = set(re.findall(r"os\.environ\.get\(\"(MMCL_[A-Z_]+)\"", src))
    assert {"MMCL_DEVICE", "MMCL_BOOK_FULL"} <= names, names
    return names - {"MMCL_FIGURE_DIR"}  # where figures go: no bearing on what a kernel computes


def test_readme_and_reading_guide_agree_on_opening_a_chapter():
    readme = _section((ROOT / "README.md").read_text(), "Running the chapters as notebooks")
    guide = _section((ROOT / "book" / "reading_guide.md").read_text(), "How to run the chapters")
    for name, text in (("README.md", readme), ("the reading guide", guide)):
        flat = " ".join(text.split())
        assert "Open With → Jupytext Notebook" in flat, f"{name}: how to open a chapter in Jupyter"
        assert "mmcl notebooks export --out" in flat, f"{name}: the export command"
        assert re.search(r"ssh -N -L (\d+):localhost:\1 ", flat), f"{name}: the SSH tunnel"
        assert "--no-browser --port" in flat, f"{name}: starting the server on the remote machine"
        assert "before" in flat.lower() and "server" in flat, f"{name}: variables set before the server starts"
        assert "Download notebook (.ipynb)" in flat, f"{name}: the rendered pages' notebook link"
        missing = sorted(v for v in _variables_the_chapters_read() if v not in flat)
        assert not missing, f"{name} does not name the variables {missing} the chapters read"
    port = re.search(r"--port (\d+)", readme).group(1)
    assert f"ssh -N -L {port}:localhost:{port}" in readme, "the README's tunnel forwards another port"
