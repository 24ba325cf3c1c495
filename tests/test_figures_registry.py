"""Every figure of the book comes from the library: the registry (mmcl.figures.registry) against the
chapters, every registered figure drawn at the tiny size, and `mmcl figure`."""
import ast
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from mmcl.cli import main  # noqa: E402
from mmcl.figures import registry  # noqa: E402
from mmcl.figures.theme import claim_of  # noqa: E402
from helpers import text_problems  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = [ROOT / "book" / f"{c}.md" for c in registry.chapters()]  # _toc.yml's order
SPECS = registry.figures()
PAGE_WIDTH = 8.0  # inches: the widest figure the book's column shows legibly
MAX_PANELS = 4  # more panels than this is a dashboard; draw two figures instead
CLAIM_CHARS = 80  # a takeaway's title: one line of a slide
SLIDE_TYPE = 11.5  # points: the smallest text a takeaway figure may carry on a 13.3 x 7.5 in slide
# plotting calls that belong in mmcl/figures/, not in a chapter's code cells
PLOTTING = re.compile(r"plt\.subplots\(|plt\.figure\(|\.plot\(|\.imshow\(|\.scatter\(|\.fill_between\(|\.bar\(|\.hist\(")


def _code_cells(path: Path):
    """The Python of every code cell (MyST cell options such as ``:tags:`` and magics dropped)."""
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(), flags=re.S)
    return ["\n".join("" if ln.startswith((":", "%")) else ln for ln in c.splitlines()) for c in cells]


def _shown_names(cell: str):
    """The names given to ``env.show(fig, "name")`` in a code cell (parsed, whatever ``fig`` is)."""
    for node in ast.walk(ast.parse(cell)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "show"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "env"):
            assert len(node.args) == 2 and isinstance(node.args[1], ast.Constant), ast.unparse(node)
            yield node.args[1].value


def test_every_figure_a_chapter_shows_is_registered_under_that_chapter():
    shown = {}
    for ch in CHAPTERS:
        for cell in _code_cells(ch):
            for name in _shown_names(cell):
                shown[name] = ch.stem
    assert len(shown) >= 30
    unregistered = sorted(set(shown) - set(SPECS))
    assert not unregistered, f"chapters show figures the registry does not know: {unregistered}"
    wrong = {n: (shown[n], SPECS[n].chapter) for n in shown if SPECS[n].chapter != shown[n]}
    assert not wrong, f"registered under another chapter (shown in, registered as): {wrong}"
    never = sorted(n for n, s in SPECS.items() if s.shown and n not in shown)
    assert not never, f"registered as shown but no chapter shows them: {never}"


def test_no_chapter_draws_a_figure_itself():
    offenders = [f"{ch.name}: {m.group(0)}" for ch in CHAPTERS for cell in _code_cells(ch)
                 for m in PLOTTING.finditer(cell)]
    assert not offenders, f"plotting code in chapter cells (move it into mmcl/figures/): {offenders}"


def test_the_chapters_follow_the_toc_and_each_has_its_two_modules():
    """registry.chapters() is _toc.yml's list of notebooks, in its order; every notebook of book/ is
    in it; stems are slugs, never numbered (inserting a chapter renames no other); and chapter <stem>
    has its drawings in mmcl.figures.<stem> and its sizes and runs in mmcl.experiments.<stem>."""
    import importlib

    from mmcl.booksupport.notebooks import chapters
    from mmcl.experiments.sizes import SIZES

    toc = [c.stem for c in chapters(ROOT)]
    assert list(registry.chapters()) == toc and toc[0] == "reading_guide"
    assert list(registry.modules()) == [f"mmcl.figures.{c}" for c in toc]
    notebooks = sorted(p.stem for p in (ROOT / "book").glob("*.md") if "kernelspec:" in p.read_text()[:600])
    assert sorted(toc) == notebooks  # no chapter file outside the toc
    numbered = [c for c in toc if not re.fullmatch(r"[a-z][a-z0-9_]*", c)]
    assert not numbered, f"chapter stems must be slugs (the stem names its modules): {numbered}"
    for c in registry.chapters():
        figs = importlib.import_module(f"mmcl.figures.{c}")
        assert figs.CHAPTER == c and registry.chapter_of(figs.__name__) == c
        ex = importlib.import_module(f"mmcl.experiments.{c}")
        assert set(ex.BY_SIZE) == set(SIZES) and ex.sizes("default") == ex.BY_SIZE["default"], c
    with pytest.raises(ValueError, match="is not the figure module of a chapter"):
        registry.chapter_of("mmcl.figures.theme")


def test_the_toc_reader_agrees_with_yaml():
    """registry.toc_entries reads _toc.yml without a YAML library: it must read what YAML reads."""
    yaml = pytest.importorskip("yaml")
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    want = [("", toc["root"])] + [(part["caption"], ch["file"]) for part in toc["parts"] for ch in part["chapters"]]
    assert registry.toc_entries() == want
    for part in toc["parts"]:  # the rendered book numbers the chapters of every part but the reference pages
        assert part.get("numbered", False) == (part["caption"] != "Reference"), part["caption"]


def test_a_chapter_inserted_mid_book_needs_only_its_toc_line(tmp_path):
    """The chapters' order is the toc's: a notebook listed between two others is read there, and a
    page without a kernelspec (Blueprint, Claims, ...) is no chapter."""
    header = "---\njupytext:\n  text_representation:\n    extension: .md\nkernelspec:\n  name: python3\n---\n"
    (tmp_path / "book").mkdir()
    for stem in ("guide", "first", "inserted", "last"):
        (tmp_path / "book" / f"{stem}.md").write_text(header + f"# {stem}\n")
    (tmp_path / "book" / "claims.md").write_text("# Claims\n")
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/guide\nparts:\n  - numbered: true\n    caption: Part one  # a comment\n"
        "    chapters:\n      - file: book/first\n      - file: book/inserted\n      - file: book/last.md\n"
        "  - caption: Reference\n    chapters:\n      - file: book/claims\n")
    assert registry.chapters(tmp_path) == ("guide", "first", "inserted", "last")
    assert registry.toc_entries(tmp_path)[2] == ("Part one", "book/inserted")
    assert registry.toc_entries(tmp_path)[-1] == ("Reference", "book/claims")
    assert registry.modules(tmp_path)[2] == "mmcl.figures.inserted"


def test_no_file_names_a_chapter_by_a_numbered_path():
    """Chapters are named by title or label (``sec-...``), never by a numbered file name such as
    ``book/<NN>_<slug>.md`` or a stem ``<NN>_<slug>``: a name that moves when a chapter is inserted
    goes stale.  Checked in the library, the tests, the benchmarks, the scripts, the chapters and
    the two READMEs."""
    stems = "|".join(registry.chapters())
    numbered = re.compile(rf"book/(?:\d\d|NN)_|\b\d\d_(?:{stems})\b")
    files = [ROOT / "README.md", *sorted((ROOT / "book").glob("*.md"))]  # book/README.md among them
    for folder in ("mmcl", "tests", "benchmarks", "scripts"):
        files += [p for p in sorted((ROOT / folder).rglob("*"))
                  if p.suffix in (".py", ".md", ".sh", ".toml", ".yml", ".css", ".js", ".txt") and p.is_file()]
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in files
             for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1) for m in numbered.finditer(line)]
    assert not found, f"chapters named by a numbered path (name them by title or sec- label): {found}"


def test_chapters_refer_to_each_other_by_label_not_number():
    """Numbers move when the book is reordered; a {ref} to a chapter's label does not."""
    numbered = [f"{ch.name}: {m.group(0)}" for ch in CHAPTERS
                for m in re.finditer(r"\b(chapters?|ch\.) ?\d+", ch.read_text(), flags=re.I)]
    assert not numbered, f"chapters named by number (use {{ref}}`sec-...`): {numbered}"


def test_theorem_boxes_carry_the_papers_number_not_a_counter():
    """Every sphinx-proof box is :nonumber: and its title says what it is ("Lemma 5.1 of the paper"),
    and every {prf:ref} gives its text (a :nonumber: target has no number to show)."""
    kinds = "lemma|theorem|proposition|assumption|corollary|definition"
    for ch in CHAPTERS:
        text = ch.read_text()
        for m in re.finditer(rf"^`{{3,4}}\{{prf:({kinds})\}} ([^\n]+)\n((?::[^\n]*\n)*)", text, flags=re.M):
            assert ":nonumber:" in m.group(3), f"{ch.name}: box {m.group(2)!r} is numbered"
            words = m.group(2).lower().split()
            first = words[1] if words[0] == "our" else words[0]  # the book's own: "Our Theorem 1"
            first = first.rstrip(":")
            assert first.startswith(m.group(1)[:5]) or first.startswith(("appendix", "part")), \
                f"{ch.name}: the title {m.group(2)!r} does not say it is a {m.group(1)}"
        bare = re.findall(r"\{prf:ref\}`[a-z0-9-]+`", text)
        assert not bare, f"{ch.name}: {{prf:ref}} without its text: {bare}"


def test_chapters_show_public_library_code_only():
    """A {literalinclude} of a private name breaks the book on a harmless rename: only public names."""
    private = [f"{ch.name}: {m.group(1)}" for ch in CHAPTERS
               for m in re.finditer(r"^:pyobject: (\S+)", ch.read_text(), flags=re.M) if m.group(1).startswith("_")]
    assert not private, f"chapters include private library code: {private}"


def test_the_reading_guides_map_links_every_chapter():
    """The map "How the book maps to the paper" is generated at every build ({mmcl-chapter-map}): one
    row per chapter of _toc.yml after the guide, in the toc's order, under its part, linked to the
    chapter, with the statements its checks test; a new chapter is in it by its toc entry."""
    from mmcl.booksupport.chapter_map import render_chapter_map, statements_text

    guide = (ROOT / "book" / "reading_guide.md").read_text()
    section = guide.split("## How the book maps to the paper", 1)[1].split("\n## ", 1)[0]
    assert "```{mmcl-chapter-map}" in section and "| chapter |" not in section
    stems = registry.chapters()
    docs = [(caption, page) for caption, page in registry.toc_entries() if Path(page).name in stems][1:]
    assert [Path(page).name for _, page in docs] == list(stems[1:])
    labels, titles = {}, {}
    for _, page in docs:
        text = (ROOT / f"{page}.md").read_text()
        m = re.search(r"^\((sec-[\w-]+)\)=\s*\n# (.+)$", text, flags=re.M)
        assert m, f"{page}.md: no (sec-...)= label above its title"
        labels[page], titles[page] = m.group(1), m.group(2)
    first, last = docs[0][1], docs[-1][1]
    rows = [dict(docname=first, paper="Lemma 5.2"), dict(docname=first, paper="Theorem 4.2 (1)"),
            dict(docname=first, paper="Lemma 5.1"), dict(docname=last, paper="Lemma 1", source="zhang2023mmcl")]
    table = render_chapter_map(docs, titles, {p: f"#{labels[p]}" for p in labels}, rows,
                               cite=lambda key: "Zhang et al. (2023)")
    at = [table.find(f"href='#{labels[page]}'") for _, page in docs]
    assert all(i >= 0 for i in at), [page for (_, page), i in zip(docs, at) if i < 0]
    assert at == sorted(at), "the map is not in the toc's order"
    assert "Theorem 4.2; Lemmas 5.1, 5.2" in table and "Zhang et al. (2023): Lemma 1" in table
    captions = [c for c, _ in docs]
    assert all(table.count(f"<td>{c}</td>") == 1 for c in set(captions))  # each part named once
    assert statements_text(["Eq. (13)", "Sec. 3.3", "Eq. (12)", "Figure 1", "Assumption 4.1 (6b)"]) == \
        "Sec. 3.3; Eqs. (12), (13); Assumption 4.1; Figure 1"


# what a chapter's figure module may import: the drawing libraries, the figures package, and
# plain values from the library (result types, constants); it calls no computation but its own
# chapter's experiment module (mmcl.experiments.<slug>, which returns what the figures draw)
DRAWING_IMPORTS = ("__future__", "typing", "math", "dataclasses", "collections", "matplotlib", "numpy", "torch",
                   "mmcl.figures")
BLUEPRINT_DRAWING = {"plot_blueprint"}


def computing_imports(module: str):
    """What the figure module ``module`` takes from the library to compute with: every imported
    name of mmcl (outside mmcl.figures and the chapter's own experiment) that is a function, and
    every call of a function through an imported mmcl module (``alias.function(...)``)."""
    import importlib
    import inspect

    slug = module.rpartition(".")[2]
    own = f"mmcl.experiments.{slug}"
    src = inspect.getsource(importlib.import_module(module))
    tree = ast.parse(src)
    found, aliases = [], {}
    skip = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in BLUEPRINT_DRAWING
            for n in ast.walk(f)}  # the Blueprint's drawing is redone apart

    def is_own(name):
        return name == own or name.startswith(own + ".")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if not a.name.startswith(DRAWING_IMPORTS) and not is_own(a.name):
                    found.append(f"import {a.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(DRAWING_IMPORTS) or is_own(node.module):
                continue
            if not node.module.startswith("mmcl"):
                found.append(f"from {node.module} import ...")
                continue
            source = importlib.import_module(node.module)
            for a in node.names:
                full = f"{node.module}.{a.name}"
                obj = getattr(source, a.name, None)
                if inspect.ismodule(obj) or obj is None:
                    if not is_own(full):
                        aliases[a.asname or a.name] = importlib.import_module(full)
                elif inspect.isclass(obj) or not callable(obj):
                    continue  # a result type or a constant
                elif node.module == "mmcl._utils" and a.name.startswith("check_"):
                    continue  # an argument check
                else:
                    found.append(f"{full} (a function)")
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in aliases):
            obj = getattr(aliases[node.func.value.id], node.func.attr, None)
            if callable(obj) and not inspect.isclass(obj):
                found.append(f"{aliases[node.func.value.id].__name__}.{node.func.attr}(...) (line {node.lineno})")
    return sorted(set(found))


def test_the_import_check_finds_a_computation(monkeypatch):
    """The check below can fail: a figure module that imports a proof's function is caught."""
    import inspect

    monkeypatch.setattr(inspect, "getsource", lambda m: (
        "from mmcl.proofs.predictions import stage1_race, Stage1Race\n"
        "from mmcl.wider import graphs\nx = graphs.normalised_adjacency(1)\ny = graphs.SNRSweep\n"))
    found = computing_imports("mmcl.figures.setting")
    assert found == ["mmcl.proofs.predictions.stage1_race (a function)",
                     "mmcl.wider.graphs.normalised_adjacency(...) (line 3)"]


def test_figure_modules_only_draw():
    """Sizes, seeds and cached runs live in mmcl.experiments.<slug>: a figure module holds no size
    table, caches nothing and runs no simulation or training; and it imports only what draws
    (matplotlib, numpy, torch's tensors, mmcl.figures), plain result types and constants of the
    library, and its own chapter's experiment module, which returns what its figures draw."""
    import importlib
    import inspect

    offenders = {}
    for module in registry.modules():
        src = inspect.getsource(importlib.import_module(module))
        for what in ('"tiny"', "lru_cache", "load_or_compute", "simulate(", "train_model(", "run_table1("):
            assert what not in src, f"{module} computes ({what}); move it to mmcl.experiments"
        found = computing_imports(module)
        if found:
            offenders[module] = found
    assert not offenders, f"figure modules that compute (move it to the chapter's experiment): {offenders}"


def test_one_figure_contract_draw_returns_the_figure_and_saves_nothing():
    """Every public drawing of mmcl/figures is ``draw_*`` (the Blueprint's ``plot_blueprint``, redone
    apart, aside), takes no output folder and saves nothing (saving is the book's ``env.show`` and
    the registry's ``save``), and no figure file exceeds 500 lines."""
    import importlib
    import inspect

    folder = ROOT / "mmcl" / "figures"
    for path in sorted(folder.glob("*.py")):
        n_lines = len(path.read_text().splitlines())
        assert n_lines <= 500, f"{path.name}: {n_lines} lines; split it (at most 500)"
        module = importlib.import_module(f"mmcl.figures.{path.stem}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ != module.__name__ or name.startswith("_") or name in BLUEPRINT_DRAWING:
                continue
            assert not name.startswith("plot_"), f"{path.name}: {name} should be draw_{name[5:]}"
            if name.startswith("draw_"):
                params = set(inspect.signature(fn).parameters)
                assert not params & {"out_dir", "save"}, f"{path.name}: {name} saves ({params & {'out_dir', 'save'}})"
                assert "save_figure(" not in inspect.getsource(fn), f"{path.name}: {name} saves"


def test_specs_are_well_formed():
    for name, spec in SPECS.items():
        assert re.fullmatch(r"[a-z0-9][a-z0-9\-]*", name), name
        assert spec.caption.strip() and callable(spec.make), name
        chapter = ROOT / "book" / f"{spec.chapter}.md"
        assert chapter.exists(), f"{name}: no chapter {spec.chapter}"
        assert f"({spec.label})=" in chapter.read_text(), f"{name}: label {spec.label} is not in {spec.chapter}"


@pytest.mark.parametrize("name", list(SPECS))
def test_every_registered_figure_draws_at_the_tiny_size(name):
    fig = registry.make(name, "tiny", "cpu")
    try:
        assert isinstance(fig, matplotlib.figure.Figure)
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert axes, f"{name}: no axes"
        drawn = sum(len(ax.lines) + len(ax.collections) + len(ax.images) + len(ax.patches) + len(ax.tables)
                    for ax in axes)
        assert drawn > 0, f"{name}: the axes are empty"
        if SPECS[name].shown:  # drawn for the book's column: legible there, one idea per figure
            width = fig.get_size_inches()[0]
            assert width <= PAGE_WIDTH + 1e-9, f"{name}: {width:.2f} in wide; the page shows at most {PAGE_WIDTH} in"
            panels = [ax for ax in axes if ax.get_label() != "<colorbar>" and ax.has_data()]
            assert len(panels) <= MAX_PANELS, f"{name}: {len(panels)} panels; split it (at most {MAX_PANELS})"
    finally:
        plt.close(fig)


def test_registry_rejects_unknown_names_and_sizes():
    with pytest.raises(ValueError, match="no figure is registered as 'nope'.*fig1-dynamics"):
        registry.get("nope")
    with pytest.raises(ValueError, match="size='huge'.*'tiny'"):
        registry.make("fig1-dynamics", "huge")


def test_figures_page_table_has_one_row_per_figure():
    rows = [r for r in registry.registry_markdown().splitlines() if r.startswith("| <a href")]
    marked = [re.search(r"<code>([a-z0-9\-]+)</code>", r).group(1) for r in rows if "**Takeaway.**" in r]
    assert marked == [n for n, s in SPECS.items() if s.takeaway]
    assert [re.search(r"<code>([a-z0-9\-]+)</code>", r).group(1) for r in rows] == list(SPECS)


def test_cli_lists_and_makes_a_registered_figure(tmp_path, capsys):
    assert main(["figure", "--list"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in SPECS)
    starred = {ln.split()[1] for ln in listed.splitlines() if ln.startswith("* ") and "--style" not in ln}
    assert starred == {n for n, s in SPECS.items() if s.takeaway} and len(starred) >= 14
    assert main(["figure", "fig1-dynamics-grid", "--out", str(tmp_path), "--size", "tiny"]) == 0
    for ext in ("pdf", "svg", "png"):
        assert (tmp_path / f"fig1-dynamics-grid.{ext}").stat().st_size > 1000


def test_cli_figure_errors_name_what_is_missing(tmp_path):
    for argv in (["figure"], ["figure", "nope", "--out", str(tmp_path)], ["figure", "fig1-dynamics"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2


def test_a_figure_for_a_talk_is_16_by_9_with_slide_sized_type(tmp_path, capsys):
    import matplotlib.pyplot as plt

    from mmcl.cli import main

    page = registry.make("blueprint", "tiny")
    talk = registry.make("blueprint", "tiny", style="talk")
    try:
        w, h = talk.get_size_inches()
        assert abs(w / h - 16 / 9) < 0.01 and w > 13
        assert talk.axes[0].title.get_fontsize() > page.axes[0].title.get_fontsize() + 4
    finally:
        plt.close(page), plt.close(talk)
    with pytest.raises(ValueError, match="style='poster' is unknown"):
        registry.make("blueprint", "tiny", style="poster")
    assert main(["figure", "blueprint", "--size", "tiny", "--style", "talk", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blueprint-talk.pdf", "blueprint-talk.png",
                                                          "blueprint-talk.svg"]
    with pytest.raises(SystemExit):
        main(["figure", "fig1", "--style", "talk", "--out", str(tmp_path)])
    assert "fig1-dynamics --style talk" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n, s in SPECS.items() if s.takeaway])
def test_a_takeaway_figure_reads_on_a_slide(name):
    """Each chapter's takeaway figure, drawn for a talk: 16:9, and no text smaller than a slide
    can show (a fixed small font size would not grow with the talk style)."""
    from matplotlib.text import Text

    fig = registry.make(name, "tiny", style="talk")
    try:
        w, h = fig.get_size_inches()
        assert abs(w / h - 16 / 9) < 0.01, f"{name}: {w:.2f} x {h:.2f} in is not 16:9"
        small = sorted({(round(t.get_fontsize(), 1), t.get_text()[:30]) for t in fig.findobj(Text)
                        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < SLIDE_TYPE})
        assert not small, f"{name}: text below {SLIDE_TYPE} pt on a slide: {small[:5]}"
        claim = claim_of(fig)  # the figure states its point, in words a slide carries
        assert claim, f"{name}: a takeaway figure needs a title that states its claim (theme.headline)"
        assert len(claim) <= CLAIM_CHARS and "\n" not in claim, f"{name}: the claim {claim!r} is too long for a slide"
    finally:
        plt.close(fig)


def test_the_text_check_finds_overlap_clipping_and_lines_leaving_the_axes():
    """The check below can fail: two titles on top of each other, a label past the edge, a line
    beyond its limits."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 3))
    try:
        a.set_title("a title far too long for its panel, running into the next")
        b.set_title("another title")
        a.text(3.0, 0.5, "past the edge", transform=a.transAxes)
        a.plot([0, 1], [0, 2])
        a.set_ylim(0, 1)
        found = text_problems(fig)
        assert any("overlap" in f for f in found), found
        assert any("cut off" in f and "past the edge" in f for f in found), found
        assert any("beyond the axes" in f for f in found), found
    finally:
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(4, 3))
    try:
        ax.plot([1, 2], [1, 2])
        ax.set_title("fits")
        assert text_problems(fig) == []
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", SPECS)
def test_every_registered_figure_reads_in_talk_style(name):
    """Drawn for a slide (``--style talk``, 16:9), no text is cut off at the edge, no two texts
    overlap (panel titles, legends, labels, tick labels) and no line leaves its axes.  Runs after
    the tiny-size draw above, whose runs are cached: it costs the drawing only."""
    fig = registry.make(name, "tiny", "cpu", style="talk")
    try:
        found = text_problems(fig)
        assert not found, f"{name} in talk style: {found[:6]}"
    finally:
        plt.close(fig)
