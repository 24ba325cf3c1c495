"""The README's commands, as written: the Quick start's two commands are what CI runs, and the
"Running the chapters as notebooks" section works: all three of its commands run here.

A real Jupyter server is started from the project's venv with the README's own command (plus the
options a headless test needs: no browser, a free local port, a token, and ``--allow-root`` when
the test runs as root, as CI does), every chapter of
``_toc.yml`` is fetched through its REST contents API as a notebook (jupytext's server extension
opens the MyST files as notebooks), the server is stopped, and the section's ``mmcl notebooks``
commands run too.  The chapters' cells are compared with jupytext reading the files directly."""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mmcl.booksupport.notebooks import chapters

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
pytestmark = pytest.mark.skipif(not VENV_BIN.is_dir(),
                                reason="needs the project's .venv (scripts/setup.sh creates it)")


def readme_commands(section: str):
    """The commands of the first bash block under the README heading ``section``, comments dropped."""
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^## {re.escape(section)}[^\n]*\n(.*?)(?=^## )", text, flags=re.M | re.S)
    assert m, f"README.md has no section {section!r}"
    block = re.search(r"```bash\n(.*?)```", m.group(1), flags=re.S)
    assert block, f"README.md's section {section!r} has no bash block"
    cmds = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [c for c in cmds if c and not c.startswith("#")]


def test_ci_runs_the_quick_starts_two_commands_as_written():
    """.ci/run runs the Quick start's two commands and refuses to run when the README's block reads
    otherwise; what the README says command 1 prints is what the script prints."""
    cmds = readme_commands("Quick start")
    assert cmds == ["bash scripts/build_book.sh", "bash scripts/test.sh"], cmds
    ci = (ROOT / ".ci" / "run").read_text()
    body = [ln.split("  #")[0].strip() for ln in ci.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert [ln for ln in body if ln in cmds] == cmds, "the two commands, in order, are what .ci/run runs"
    assert "expected=$'bash scripts/build_book.sh\\nbash scripts/test.sh'" in ci
    assert "The book is at: file://" in (ROOT / "scripts" / "build_book.sh").read_text()
    assert "The book is at: file://" in (ROOT / "README.md").read_text()
    assert "tests: {passed} passed, {failed} failed" in (ROOT / "scripts" / "test.sh").read_text()


def _command(prefix: str):
    cmds = [c for c in readme_commands("Running the chapters as notebooks") if c.startswith(prefix)]
    assert len(cmds) == 1, f"the README's notebook section has no single command starting {prefix!r}: {cmds}"
    return shlex.split(cmds[0])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, token: str):
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_the_readme_starts_jupyter_lab_and_serves_every_chapter_as_a_notebook(tmp_path):
    import jupytext

    argv = _command(".venv/bin/jupyter lab")
    assert (ROOT / argv[0]).exists(), f"{argv[0]} is missing: scripts/setup.sh must install JupyterLab"
    assert (VENV_BIN / "jupyter-lab").exists(), "jupyter-lab is not installed in .venv (the README's command fails)"
    served = Path(argv[-1])  # the folder the README opens, relative to the checkout
    port, token = _free_port(), "mmcl-test-token"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([*argv, "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
                             f"--IdentityProvider.token={token}",
                             *(["--allow-root"] if os.geteuid() == 0 else [])], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _get(f"{base}/api/status", token)
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    out = proc.stdout.read()
                    pytest.fail(f"the Jupyter server did not start (exit {proc.poll()}):\n{out[-3000:]}")
                time.sleep(0.5)
        names = chapters(ROOT)
        assert len(names) >= 10, names
        print(f"Jupyter server on port {port}, serving {served}/")
        for ch in names:
            rel = ch.relative_to(ROOT / served).as_posix()
            model = _get(f"{base}/api/contents/{rel}?type=notebook&content=1", token)
            assert model["type"] == "notebook", (rel, model["type"])
            cells = model["content"]["cells"]
            code = [c for c in cells if c["cell_type"] == "code"]
            direct = [c for c in jupytext.read(ch).cells if c.cell_type == "code"]
            assert len(code) == len(direct) > 0, (rel, len(code), len(direct))
            assert "chapter_setup" in "".join(c["source"] for c in code[:2]), rel
            print(f"  {rel}: notebook, {len(cells)} cells ({len(code)} code)")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode is not None, "the Jupyter server did not stop"


def test_the_readme_exports_every_chapter_as_ipynb(tmp_path):
    import nbformat

    argv = _command(".venv/bin/mmcl notebooks export")
    i = argv.index("--out")
    argv[i + 1] = str(tmp_path / "notebooks")
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    written = sorted(p.stem for p in (tmp_path / "notebooks").glob("*.ipynb"))
    assert written == sorted(c.stem for c in chapters(ROOT))
    for p in (tmp_path / "notebooks").glob("*.ipynb"):
        nbformat.validate(nbformat.read(p, as_version=4))


def test_the_readme_executes_one_chapter_and_writes_its_figures(tmp_path):
    """`mmcl notebooks run CHAPTER --out DIR` as the README writes it: the executed notebook and the
    chapter's figures (PDF, SVG, PNG) land in DIR."""
    import nbformat

    argv = _command(".venv/bin/mmcl notebooks run")
    i = argv.index("--out")
    argv[i + 1] = str(tmp_path / "figs")
    chapter = argv[argv.index("run") + 1]
    out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "MMCL_CACHE": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    nb = nbformat.read(tmp_path / "figs" / f"{chapter}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), "a cell was not executed"
    pngs = sorted(p.stem for p in (tmp_path / "figs").glob("*.png"))
    assert pngs and all((tmp_path / "figs" / f"{n}.{ext}").exists() for n in pngs for ext in ("pdf", "svg")), pngs
