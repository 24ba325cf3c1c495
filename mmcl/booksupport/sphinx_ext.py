"""A Sphinx extension for the book (listed in ``_config.yml``): what a static configuration cannot say.

* **Launch and repository buttons follow one setting.**  ``repository.url`` in ``_config.yml``
  (empty in this checkout) is the book's repository.  Empty: the pages have no repository button
  and no Binder/Colab launch buttons, which would otherwise point at a repository that does not
  exist; the download buttons (``.md``, ``.ipynb``, ``.pdf``) stay.  Set: the repository button
  and the Binder and Colab launch buttons appear, pointing at that URL.
* **The Figures page is generated from the figure registry.**  Before the sources are read, the
  table of :func:`mmcl.figures.registry.registry_markdown` is written to
  ``_build/generated/figures_registry.md``, which ``book/figures.md`` includes.
* **The API page is generated from the package.**  Before the sources are read, the ``automodule``
  of every public module (:func:`mmcl.booksupport.api_page.api_markdown`) is written to
  ``_build/generated/api.md``, which ``book/api.md`` includes.  A constant's ``#:`` comment is read
  as prose, never as napoleon's ``type: description``.
* **The reading guide's map of the chapters is generated.**  ``{mmcl-chapter-map}`` becomes, when
  the page is written, one row per chapter of ``_toc.yml`` with its part, its title and the
  statements its checks test (:func:`mmcl.booksupport.chapter_map.render_chapter_map`).
* **The Claims page is collected from the executed chapters.**  Every check cell's output carries
  its rows of the claims register (:mod:`mmcl.booksupport.claims`) as JSON in its HTML table.  When a
  page is read, the rows are taken from its doctree together with the section they sit in; the
  ``{mmcl-claims}`` directive of ``book/claims.md`` becomes, when pages are written, one table of
  every row, grouped by the paper's statement, each linked to its chapter's section.  The page is
  re-written at every build, so it follows chapters read from the execution cache as well.
"""
from __future__ import annotations

import html
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive

from mmcl.booksupport.chapter_map import statement_key  # noqa: F401 (the Claims page's order, public here too)
from mmcl.booksupport.chapter_map import statement_name as _statement_name

BINDERHUB_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"
GENERATED = Path("_build") / "generated" / "figures_registry.md"
GENERATED_API = Path("_build") / "generated" / "api.md"


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


def _write(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_text() != text:  # unchanged: keep the file's time (no rebuild)
        out.write_text(text)


def _figures_page(app) -> None:
    from mmcl.figures.registry import registry_markdown

    _write(Path(app.srcdir) / GENERATED, registry_markdown())


def _api_page(app) -> None:
    from mmcl.booksupport.api_page import api_markdown

    _write(Path(app.srcdir) / GENERATED_API, api_markdown())


def _prose_attribute_docs(app, what, name, obj, options, lines) -> None:
    """A constant's ``#:`` comment is prose.  napoleon reads the first line of a data or attribute
    docstring as ``type: description`` and cross-references the words before its first colon as a
    type ("The decisive scaling: the chapter scaling ..." -> a class ``The decisive scaling``, a
    broken reference), once in each of its passes (NumPy style, then Google style); an empty type
    in front, one per pass, keeps the whole line the description.  Runs before napoleon (priority
    400 < 500)."""
    passes = sum(bool(getattr(app.config, f"napoleon_{style}_docstring", False)) for style in ("numpy", "google"))
    if what in ("data", "attribute") and passes and lines and lines[0].strip() \
            and not lines[0].lstrip().startswith(":"):
        lines[0] = ": " * passes + lines[0]


# -- the claims register ------------------------------------------------------------------------
CLAIMS_DOC = "book/claims"


class claims_table(nodes.General, nodes.Element):
    """Where the Claims page's table goes (replaced when the page is written)."""


class ClaimsDirective(Directive):
    has_content = False

    def run(self):
        return [claims_table("")]


def _collect_claims(app, doctree) -> None:
    from mmcl.booksupport.claims_table import ATTR, parse_html

    env = app.env
    if not hasattr(env, "mmcl_claims"):
        env.mmcl_claims = {}
    rows = []
    for node in doctree.findall(nodes.raw):
        text = node.astext()
        if ATTR not in text:
            continue
        sec = node.parent
        while sec is not None and not isinstance(sec, nodes.section):
            sec = sec.parent
        anchor = sec["ids"][0] if sec is not None and sec["ids"] else ""
        title = sec[0].astext() if sec is not None and len(sec) and isinstance(sec[0], nodes.title) else ""
        for row in parse_html(text):
            row.update(docname=env.docname, anchor=anchor, section_title=title)
            rows.append(row)
    if rows:
        env.mmcl_claims[env.docname] = rows
    else:
        env.mmcl_claims.pop(env.docname, None)


def _purge_claims(app, env, docname) -> None:
    getattr(env, "mmcl_claims", {}).pop(docname, None)


def _merge_claims(app, env, docnames, other) -> None:
    if not hasattr(env, "mmcl_claims"):
        env.mmcl_claims = {}
    env.mmcl_claims.update(getattr(other, "mmcl_claims", {}))


def _rewrite_claims_page(app, env):
    return [d for d in (CLAIMS_DOC, BLUEPRINT_DOC, _reading_guide_doc(app)) if d in env.found_docs]


# -- the blueprint -------------------------------------------------------------------------------
BLUEPRINT_DOC = "book/blueprint"


def _reading_guide_doc(app) -> str:
    """The toc's root page, the reading guide: its table of findings and its map of the chapters are
    built from every chapter's rows."""
    from mmcl.figures.registry import toc_entries

    if not (Path(app.srcdir) / "_toc.yml").exists():  # a Sphinx project that is not the book
        return ""
    return toc_entries(app.srcdir)[0][1].removesuffix(".md")


class blueprint_graph(nodes.General, nodes.Element):
    """Where the Blueprint page's graph and table go (replaced when the page is written)."""


class BlueprintDirective(Directive):
    has_content = False

    def run(self):
        return [blueprint_graph("")]


class findings_table(nodes.General, nodes.Element):
    """Where the reading guide's table of findings goes (replaced when the page is written)."""


class FindingsDirective(Directive):
    has_content = False

    def run(self):
        return [findings_table("")]


class chapter_map(nodes.General, nodes.Element):
    """Where the reading guide's map of the chapters goes (replaced when the page is written)."""


class ChapterMapDirective(Directive):
    has_content = False

    def run(self):
        return [chapter_map("")]


def _resolve_blueprint(app, doctree, fromdocname) -> None:
    """The Blueprint page's graph and table, and the reading guide's findings, from every chapter's rows."""
    from sphinx.util import logging

    from mmcl.booksupport.blueprint_page import render_page, write_figure
    from mmcl.booksupport.findings import FINDINGS, render_findings
    from mmcl.proofs import blueprint as bp

    log = logging.getLogger(__name__)
    graphs, tables = list(doctree.findall(blueprint_graph)), list(doctree.findall(findings_table))
    maps = list(doctree.findall(chapter_map))
    if not graphs and not tables and not maps:
        return
    env = app.env
    labels = env.get_domain("std").labels

    def uri(label):
        doc, anchor, _ = labels[label]
        return app.builder.get_relative_uri(fromdocname, doc) + (f"#{anchor}" if anchor else "")

    rows = []
    for doc in sorted(getattr(env, "mmcl_claims", {})):
        for r in env.mmcl_claims[doc]:
            target, anchor = r["docname"], r["anchor"]
            if r.get("section") in labels:
                target, anchor = labels[r["section"]][:2]
            rows.append(dict(r, href=app.builder.get_relative_uri(fromdocname, target) + (f"#{anchor}" if anchor else "")))
    links, claims_links = {}, {}
    for s in bp.STATEMENTS:
        if s.section:
            if s.section not in labels:
                log.warning(f"blueprint: section={s.section!r} of {s.key!r} is not a label of the book",
                            location=fromdocname)
            else:
                links[s.key] = uri(s.section)
        if CLAIMS_DOC in env.found_docs:
            claims_links[s.key] = (app.builder.get_relative_uri(fromdocname, CLAIMS_DOC)
                                   + "#" + _anchor(_statement_name(s.key)))
    for node in graphs:
        node.replace_self(nodes.raw("", render_page(rows, links, claims_links), format="html"))
        # the graph for a talk, with the same verdicts: into the figure folder, and into the output's
        # figures/ too, which Sphinx filled from html_extra_path before it wrote any page
        for path in write_figure(rows):
            if app.builder.format == "html":
                (Path(app.outdir) / "figures").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, Path(app.outdir) / "figures" / path.name)
    if tables:
        where = {}
        for f in FINDINGS:
            if f.where not in labels:
                log.warning(f"findings: section={f.where!r} is not a label of the book", location=fromdocname)
            else:
                where[f.where] = uri(f.where)
            if f.row and not any(f.row in r["claim"] for r in rows):
                log.warning(f"findings: no claim of the register contains {f.row!r}", location=fromdocname)
        for node in tables:
            node.replace_self(nodes.raw("", render_findings(rows, where), format="html"))
    if maps:
        from mmcl.booksupport.chapter_map import render_chapter_map
        from mmcl.figures.registry import chapters as toc_chapters, toc_entries

        stems = set(toc_chapters(app.srcdir))
        docs = [(caption, page.removesuffix(".md")) for caption, page in toc_entries(app.srcdir)
                if Path(page).name.removesuffix(".md") in stems and page.removesuffix(".md") != fromdocname]
        titles = {d: tex_plain(env.titles[d].astext()) for _, d in docs if d in env.titles}
        hrefs = {d: app.builder.get_relative_uri(fromdocname, d) for _, d in docs if d in env.found_docs}
        table = render_chapter_map(docs, titles, hrefs, rows, cite=lambda key: _cite(app, key))
        for node in maps:
            node.replace_self(nodes.raw("", table, format="html"))


_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "zeta": "ζ", "eta": "η",
          "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "rho": "ρ", "sigma": "σ",
          "tau": "τ"}


def tex_plain(text: str) -> str:
    """A title's text (``astext()``, where math keeps its TeX) as plain text for a link:
    ``Does the verdict depend on our \\sigma_0?`` -> ``Does the verdict depend on our σ0?``."""
    text = re.sub(r"\\(?:mathbf|boldsymbol|mathrm|operatorname|widetilde|tilde)\s*", "", text)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m.group(1), m.group(1)), text)
    return text.replace("^2", "²").replace("^*", "*").replace("_", "").replace("{", "").replace("}", "")


def _anchor(name: str) -> str:
    """An HTML id for a statement's rows: ``Lemma C.11`` -> ``claims-lemma-c-11``."""
    return "claims-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _cite(app, key: str) -> str:
    """``Zhang et al. (2023)`` for a key of ``references.bib`` (the key itself if it is absent)."""
    bib = Path(app.srcdir) / "references.bib"
    text = bib.read_text() if bib.exists() else ""
    m = re.search(r"@\w+\{" + re.escape(key) + r",(.*?)\n\}", text, flags=re.S)
    if not m:
        return key
    author = re.search(r"author\s*=\s*[{\"](.+?)[}\"],?\s*\n", m.group(1), flags=re.S)
    year = re.search(r"year\s*=\s*[{\"]?(\d{4})", m.group(1))
    if not author or not year:
        return key
    names = [a.strip() for a in author.group(1).split(" and ")]
    last = [n.split(",")[0].strip() if "," in n else n.split()[-1] for n in names]
    who = last[0] if len(last) == 1 else (f"{last[0]} and {last[1]}" if len(last) == 2 else f"{last[0]} et al.")
    return f"{who.strip('{}')} ({year.group(1)})"


def _resolve_claims(app, doctree, fromdocname) -> None:
    from sphinx.util import logging

    from mmcl.booksupport.claims import MAIN, VERDICT_TEXT
    from mmcl.booksupport.claims_table import format_number

    log = logging.getLogger(__name__)
    env = app.env
    everything = getattr(env, "mmcl_claims", {})
    labels = env.get_domain("std").labels
    for node in list(doctree.findall(claims_table)):
        rows = [r for doc in sorted(everything) for r in everything[doc]]
        groups = defaultdict(list)
        for r in rows:
            groups[(r.get("source", MAIN) != MAIN, r.get("source", MAIN), _statement_name(r["paper"]))].append(r)
        counts = Counter(r["verdict"] for r in rows)
        out = [f"<p class='mmcl-claims-summary'>{len(rows)} claims from {len(everything)} chapters: "
               + ", ".join(f"<b>{counts.get(v, 0)}</b> {VERDICT_TEXT[v]}" for v in VERDICT_TEXT) + ".</p>"]
        order = sorted(groups, key=lambda g: (g[0], g[1], _importance(g[2]), statement_key(g[2])))
        names = {g: (g[2] if g[1] == MAIN else f"{g[2]} of {_cite(app, g[1])}") for g in order}
        # at a glance: one line per statement, its verdicts counted, linked to its rows below
        out.append("<table class='mmcl-claims-glance table'><thead><tr><th>statement</th>"
                   + "".join(f"<th>{VERDICT_TEXT[v]}</th>" for v in VERDICT_TEXT) + "</tr></thead><tbody>")
        for g in order:
            c = Counter(r["verdict"] for r in groups[g])
            out.append(f"<tr><td><a class='reference internal' href='#{_anchor(names[g])}'>{html.escape(names[g])}</a></td>"
                       + "".join(f"<td class='mmcl-verdict mmcl-{v}'>{c.get(v, '') or ''}</td>" for v in VERDICT_TEXT)
                       + "</tr>")
        out.append("</tbody></table>")
        out.append("<p class='mmcl-claims-filter'>Show: "
                   + " ".join(f"<label><input type='checkbox'{'' if v == 'observation' else ' checked'} "
                              f"data-verdict='{v}'> {VERDICT_TEXT[v]}</label>" for v in VERDICT_TEXT)
                   + f" <span class='mmcl-claims-shown'>({len(rows)} of {len(rows)} claims shown)</span></p>")
        out.append(_premise_legend())
        out.append("<table class='mmcl-claims-register table'><thead><tr><th>statement</th><th>claim</th>"
                   "<th>verdict</th><th>observed</th><th>bound</th><th>margin</th><th>where</th></tr></thead><tbody>")
        for gkey in order:
            grp = groups[gkey]
            name = names[gkey]
            for k, r in enumerate(grp):
                doc, anchor, where = r["docname"], r["anchor"], r.get("section_title", "")
                if r.get("section"):
                    if r["section"] not in labels:
                        log.warning(f"claims register: section={r['section']!r} of the claim {r['claim']!r} "
                                    f"({doc}) is not a label of the book", location=doc)
                    else:
                        doc, anchor, where = labels[r["section"]]
                uri = app.builder.get_relative_uri(fromdocname, doc) + (f"#{anchor}" if anchor else "")
                title = tex_plain(env.titles[doc].astext()) if doc in env.titles else doc
                chapter = title.split(":")[0]  # "Single-modal learning, stage 1: noise is ..." -> its head
                where = tex_plain(where)
                # the computed failing premises replace the words a check may add about them (the keys
                # are explained once, above the table)
                fail = f"failing premises here: {r['failing']}" if r.get("failing") else r.get("premises", "")
                notes = "; ".join(x for x in (fail, r.get("note", "")) if x)
                # every row names its statement (so a filtered view still does); the repeats are blank
                # until the verdict filter (mmcl-claims.js) makes a row the first visible one of its group
                head = (f"<td class='mmcl-statement{' mmcl-repeat' if k else ''}'"
                        f"{' id=' + repr(_anchor(name)) if k == 0 else ''}>{html.escape(name)}</td>")
                margin = "" if r["kind"] in ("equal", "true") else f"{100 * r['margin']:.0f} %"
                size = f" <span class='mmcl-size'>(worst of {r['size']})</span>" if r["size"] > 1 else ""
                loose = " <span class='mmcl-loose'>(the paper's bound; loose)</span>" if r.get("paper_bound") else ""
                out.append(
                    f"<tr class='mmcl-row' data-verdict='{r['verdict']}' data-group='{_anchor(name)}'>{head}"
                    f"<td>{html.escape(r['claim'])}"
                    + (f"<br><small>{html.escape(notes)}</small>" if notes else "")
                    + f"</td><td class='mmcl-verdict mmcl-{r['verdict']}'>{VERDICT_TEXT[r['verdict']]}</td>"
                    f"<td>{format_number(r['observed'])}{size}</td><td>{html.escape(r['bound_text'])}{loose}</td>"
                    f"<td>{margin}</td><td><a class='reference internal' href='{html.escape(uri)}' "
                    f"title='{html.escape(title, quote=True)}'>"
                    f"{html.escape(chapter)}{' § ' + html.escape(where) if where else ''}</a></td></tr>")
        out.append("</tbody></table>")
        node.replace_self(nodes.raw("", "\n".join(out), format="html"))


def _importance(name: str) -> int:
    """The Claims page's order of statements: the theorems, then the statements whose proof has a gap,
    then the rest (each group in the paper's order)."""
    from mmcl.proofs import blueprint as bp

    sts = bp.resolve(name)
    if any(s.kind == "theorem" for s in sts):
        return 0
    if any(s.audit.status in ("gap-inside", "gap-outside") for s in sts):
        return 1
    return 2


def _premise_legend() -> str:
    """What each premise key means, once (rows list only the keys that fail where they measured)."""
    from mmcl.model.config import SyntheticConfig
    from mmcl.proofs.assumptions import check_assumption41, premise_conditions
    from mmcl.proofs.blueprint import UNREACHABLE

    cfg = SyntheticConfig()
    items = "".join(f"<li><b>{html.escape(c.key)}</b>: {html.escape(c.explicit)} ({html.escape(c.source)})"
                    + (" &ndash; out of any computation's reach" if c.key in UNREACHABLE else "") + "</li>"
                    for c in check_assumption41(cfg) + premise_conditions(cfg))
    return ("<details class='mmcl-premise-legend'><summary>The premise keys that rows list where they fail "
            "(Assumption 4.1's explicit conditions, Sec. 3.3, Lemmas C.6 and C.10)</summary><ul>" + items
            + "</ul></details>")


def _static(app, config) -> None:
    config.html_static_path.append(str(Path(__file__).resolve().parent / "static"))


def setup(app):
    app.connect("config-inited", _buttons)
    app.connect("config-inited", _static)
    app.add_css_file("mmcl-claims.css")
    app.add_js_file("mmcl-claims.js")
    app.connect("builder-inited", _figures_page)
    app.connect("builder-inited", _api_page)
    app.setup_extension("sphinx.ext.autodoc")  # its event, whichever extension _config.yml lists first
    app.connect("autodoc-process-docstring", _prose_attribute_docs, priority=400)
    app.add_node(claims_table)
    app.add_directive("mmcl-claims", ClaimsDirective)
    app.add_node(blueprint_graph)
    app.add_directive("mmcl-blueprint", BlueprintDirective)
    app.add_node(findings_table)
    app.add_directive("mmcl-findings", FindingsDirective)
    app.add_node(chapter_map)
    app.add_directive("mmcl-chapter-map", ChapterMapDirective)
    app.connect("doctree-resolved", _resolve_blueprint)
    app.connect("doctree-read", _collect_claims)
    app.connect("env-purge-doc", _purge_claims)
    app.connect("env-merge-info", _merge_claims)
    app.connect("env-get-updated", _rewrite_claims_page)
    app.connect("doctree-resolved", _resolve_claims)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
