"""How the rendered pages read: what the Sphinx extension (:mod:`mmcl.booksupport.sphinx_ext`) does
to every page besides the book's generated tables.

* **Links read as text.**  A reference to a section whose title holds math shows the title's plain
  text (``n=9,224``), never its TeX (``n=9{,}224``): :func:`tex_plain` on
  the link's words.
* **A figure's alt text is its caption.**  A cell's images get, in order, the registered captions
  (:func:`mmcl.figures.registry.figures`) of the names its source passes to ``env.show``; the
  image file's path is no description for a reader who cannot see the figure.
* **Every chapter links its executed notebook.**  Under a chapter's title, a "Download notebook
  (.ipynb)" link; when the build finishes, the notebook myst-nb executed
  (``_build/jupyter_execute/<doc>.ipynb``) is copied beside the page's HTML, under
  ``NOTEBOOK_DIR``.
* **Each chapter's run time, measured.**  ``{mmcl-run-times}`` becomes a table of the seconds each
  chapter's notebook took to execute in the build (myst-nb's execution record, which keeps the
  time of a run read back from the execution cache).

Public: every name in ``__all__`` (:func:`setup` registers the handlers with Sphinx;
:func:`tex_plain`, :func:`show_names` and :func:`run_times_html` are what the tests check without a
build).
"""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

__all__ = ["NOTEBOOK_DIR", "tex_plain", "show_names", "run_times_html", "setup"]


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η",
          "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "rho": "ρ", "sigma": "σ",
          "tau": "τ"}


def tex_plain(text: str) -> str:
    """A title's text (``astext()``, where math keeps its TeX) as plain text for a link:
    ``Does the verdict depend on our \\sigma_0?`` -> ``Does the verdict depend on our σ0?``."""
    text = re.sub(r"\\(?:mathbf|boldsymbol|mathrm|operatorname|widetilde|tilde)\s*", "", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m.group(1), m.group(1)), text)
    return text.replace("^2", "²").replace("^*", "*").replace("_", "").replace("{", "").replace("}", "")


_TEX = re.compile(r"\\[A-Za-z]|\{,\}")
#: Where the executed notebooks go in the HTML output: ``<outdir>/_notebooks/<doc>.ipynb``.
NOTEBOOK_DIR = "_notebooks"



def _plain_link_texts(app, doctree, fromdocname) -> None:
    """A resolved ``{ref}`` to a title with math shows the title's TeX; its plain text instead."""
    for node in list(doctree.findall(nodes.inline)):
        if "std-ref" in node.get("classes", []) and _TEX.search(node.astext()):
            node.replace_self(nodes.inline("", tex_plain(node.astext()), classes=node["classes"]))


def _cell_names(cell) -> list:
    """The figure names the cell's source passes to ``env.show``, in order."""
    src = [n for n in cell.findall(nodes.literal_block)
           if "cell_input" in getattr(n.parent, "get", lambda *_: [])("classes", [])]
    return show_names("\n".join(n.astext() for n in src))


def show_names(source: str) -> list:
    """The names ``env.show(fig, "name")`` calls in ``source`` pass, in order: the last string
    literal inside each call's parentheses (the figure's own arguments may hold strings too)."""
    names = []
    for m in re.finditer(r"\.show\(", source):
        depth, k = 1, m.end()
        while k < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[k], 0)
            k += 1
        found = re.findall(r"[\"']([a-z0-9-]+)[\"']", source[m.end():k - 1])
        if found:
            names.append(found[-1])
    return names


def _figure_alt_texts(app, doctree, fromdocname) -> None:
    """Each image a cell shows through ``env.show`` gets its registered caption as alt text."""
    from mmcl.figures.registry import figures

    captions = None
    for cell in doctree.findall(nodes.container):
        if "cell" not in cell.get("classes", []):
            continue
        images = [im for im in cell.findall(nodes.image)]
        names = _cell_names(cell)
        if not images or not names:
            continue
        if captions is None:
            captions = {k: spec.caption for k, spec in figures().items()}
        for im, name in zip(images, names):
            if name in captions:
                im["alt"] = captions[name]


def _is_chapter(app, docname: str) -> bool:
    from mmcl.figures.registry import chapters

    if not (Path(app.srcdir) / "_toc.yml").exists():
        return False
    return docname.startswith("book/") and docname.split("/")[-1] in chapters(app.srcdir)


def _notebook_uri(app, docname: str) -> str:
    """The page's relative link to its executed notebook in the HTML output."""
    depth = docname.count("/")
    return "../" * depth + f"{NOTEBOOK_DIR}/{docname}.ipynb"


def _notebook_link(app, doctree, fromdocname) -> None:
    """Under a chapter's title: a link to download the notebook the build executed."""
    if not _is_chapter(app, fromdocname):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not len(section) or not isinstance(section[0], nodes.title):
        return
    href = html.escape(_notebook_uri(app, fromdocname), quote=True)
    link = (f"<p class='mmcl-notebook-link'><a class='reference download' href='{href}' download>"
            "Download notebook (.ipynb)</a> &middot; executed by this build, outputs included</p>")
    section.insert(1, nodes.raw("", link, format="html"))


def _copy_notebooks(app, exception) -> None:
    """Copy each chapter's executed notebook beside the HTML (where :func:`_notebook_link` points)."""

    if exception is not None or app.builder.format != "html":
        return
    executed = Path(app.outdir).parent / "jupyter_execute"
    for doc in sorted(app.env.found_docs):
        src = executed / f"{doc}.ipynb"
        if _is_chapter(app, doc) and src.exists():
            dst = Path(app.outdir) / NOTEBOOK_DIR / f"{doc}.ipynb"
            dst.parent.mkdir(parents=True, exist_ok=True)
            merged = _with_cached_outputs(app, src)
            if merged is None:
                shutil.copyfile(src, dst)
            else:
                dst.write_text(merged, encoding="utf-8")


def _with_cached_outputs(app, path: Path):
    """The notebook at ``path`` with the outputs of its run in the execution cache (myst-nb writes a
    notebook read back from the cache without them), as text; ``None`` where the cache has no run
    of it."""
    try:
        import nbformat
        from jupyter_cache import get_cache
    except ImportError:  # pragma: no cover - myst-nb brings both
        return None
    where = getattr(app.config, "nb_execution_cache_path", "") or str(Path(app.outdir).parent / ".jupyter_cache")
    where = Path(where) if Path(where).is_absolute() else Path(app.srcdir) / where
    if not where.exists():
        return None
    nb = nbformat.read(str(path), as_version=4)
    try:
        _, merged = get_cache(str(where)).merge_match_into_notebook(nb)
    except KeyError:  # no cached run matches the notebook's code
        return None
    return nbformat.writes(merged)


class run_times(nodes.General, nodes.Element):
    """Where the table of the chapters' run times goes (replaced when the page is written)."""


class RunTimesDirective(Directive):
    has_content = False

    def run(self):
        return [run_times("")]


def run_times_html(entries) -> str:
    """The table: ``entries`` are ``(title, href, seconds or None, method)``, in the book's order."""
    out = ["<table class='mmcl-run-times table'><thead><tr><th>chapter</th><th>run time</th>"
           "</tr></thead><tbody>"]
    total = 0.0
    for title, href, seconds, method in entries:
        if seconds is None:
            when = "&ndash;"
        else:
            total += seconds
            when = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
        out.append(f"<tr><td><a class='reference internal' href='{html.escape(href, quote=True)}'>"
                   f"{html.escape(title)}</a></td><td data-seconds='{'' if seconds is None else f'{seconds:.1f}'}'>"
                   f"{when}</td></tr>")
    out.append(f"</tbody><tfoot><tr><td>all chapters</td><td>{total / 60:.1f} min</td></tr></tfoot></table>")
    return "".join(out)


def _resolve_run_times(app, doctree, fromdocname) -> None:
    nodes_ = list(doctree.findall(run_times))
    if not nodes_:
        return
    from myst_nb.sphinx_ import NbMetadataCollector

    from mmcl.figures.registry import chapters

    env = app.env
    entries = []
    for stem in chapters(app.srcdir):
        doc = f"book/{stem}"
        data = NbMetadataCollector.get_exec_data(env, doc) if doc in env.found_docs else None
        seconds = (data or {}).get("runtime")
        title = tex_plain(env.titles[doc].astext()) if doc in env.titles else stem
        href = app.builder.get_relative_uri(fromdocname, doc) or f"{stem}.html"
        entries.append((title, href, seconds,
                        (data or {}).get("method", "")))
    for node in nodes_:
        node.replace_self(nodes.raw("", run_times_html(entries), format="html"))



def setup(app) -> None:
    """Register the handlers above with ``app``."""
    app.connect("doctree-resolved", _plain_link_texts)
    app.connect("doctree-resolved", _figure_alt_texts)
    app.connect("doctree-resolved", _notebook_link)
    app.connect("build-finished", _copy_notebooks)
    app.add_node(run_times)
    app.add_directive("mmcl-run-times", RunTimesDirective)
    app.connect("doctree-resolved", _resolve_run_times)
