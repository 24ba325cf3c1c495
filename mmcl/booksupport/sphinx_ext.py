"""A Sphinx extension for the book (listed in ``_config.yml``): what a static configuration cannot say.

* **Launch and repository buttons follow one setting.**  ``repository.url`` in ``_config.yml``
  (empty in this checkout) is the book's repository.  Empty: the pages have no repository button
  and no Binder/Colab launch buttons, which would otherwise point at a repository that does not
  exist; the download buttons (``.md``, ``.ipynb``, ``.pdf``) stay.  Set: the repository button
  and the Binder and Colab launch buttons appear, pointing at that URL.
* **The Figures page is generated from the figure registry.**  Before the sources are read, the
  table of :func:`mmcl.figures.registry.registry_markdown` is written to
  ``_build/generated/figures_registry.md``, which ``book/figures.md`` includes.
"""
from __future__ import annotations

from pathlib import Path

BINDERHUB_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"
GENERATED = Path("_build") / "generated" / "figures_registry.md"


def _buttons(app, config) -> None:
    opts = config.html_theme_options
    url = (opts.get("repository_url") or "").strip()
    launch = dict(opts.get("launch_buttons") or {})
    if url:
        opts["use_repository_button"] = True
        launch.setdefault("binderhub_url", BINDERHUB_URL)
        launch.setdefault("colab_url", COLAB_URL)
    else:
        opts["use_repository_button"] = False
        opts["use_issues_button"] = False
        opts["use_edit_page_button"] = False
        for key in ("binderhub_url", "colab_url", "jupyterhub_url", "thebe", "jupyterlite_url"):
            launch.pop(key, None)
    opts["launch_buttons"] = launch


def _figures_page(app) -> None:
    from mmcl.figures.registry import registry_markdown

    out = Path(app.srcdir) / GENERATED
    out.parent.mkdir(parents=True, exist_ok=True)
    text = registry_markdown()
    if not out.exists() or out.read_text() != text:  # unchanged: keep the file's time (no rebuild)
        out.write_text(text)


def setup(app):
    app.connect("config-inited", _buttons)
    app.connect("builder-inited", _figures_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
