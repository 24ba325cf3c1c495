"""The claims register (mmcl.booksupport.claims): every check of the book asserts through it, each
call can fail, loose or unexplained verdicts are refused, and the Sphinx extension collects the rows
of the executed chapters into the Claims page."""
import ast
import io
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from mmcl.booksupport import claims as cl
from mmcl.booksupport.claims import ClaimFailed, Claims
from mmcl.figures import registry

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = [ROOT / "book" / f"{c}.md" for c in registry.chapters()]  # _toc.yml's order
METHODS = {"upper", "lower", "between", "near", "equal", "roundoff", "true", "section", "setting", "constants"}


def _reg():
    """A register measuring at Figure 1's setting (where most premises of the paper's lemmas fail)."""
    import mmcl

    return Claims("test", display=False).setting(mmcl.SyntheticConfig())


# -- each kind of claim asserts, elementwise, and records the element closest to failing --------------
def test_upper_and_lower_hold_and_fail_elementwise():
    c = _reg()
    c.upper("every rate stays below the bound", paper="Lemma 5.2", verdict="holds",
            observed=torch.tensor([0.3, 0.45, 0.2]), bound=0.5)
    row = c.rows[-1]
    assert row.observed == pytest.approx(0.45) and row.size == 3 and row.margin == pytest.approx(0.1)
    with pytest.raises(ClaimFailed, match=r"1 of 3 elements"):
        c.upper("every rate stays below the bound", paper="Lemma 5.2", verdict="holds",
                observed=[0.3, 0.55, 0.2], bound=0.5)
    with pytest.raises(ClaimFailed):
        c.upper("strictly below the bound", paper="Lemma 5.2", verdict="holds", observed=0.5, bound=0.5, strict=True)
    c.lower("every sample memorised at T1", paper="Lemma 5.2", verdict="holds", observed=np.array([1.4, 2.0]),
            bound=1.0)
    with pytest.raises(ClaimFailed):
        c.lower("every sample memorised at T1", paper="Lemma 5.2", verdict="holds", observed=[0.9, 2.0], bound=1.0)
    assert len(c.rows) == 2  # failed claims are not recorded


def test_bounds_broadcast_elementwise():
    c = _reg()
    c.upper("each rate below its own bound", paper="Lemma 5.2", verdict="holds", observed=[1.0, 2.0], bound=[1.5, 2.5])
    with pytest.raises(ClaimFailed):
        c.upper("each rate below its own bound", paper="Lemma 5.2", verdict="holds", observed=[1.0, 2.0],
                bound=[1.5, 1.9])
    with pytest.raises(ValueError, match="bound has 3 values for 2"):
        c.upper("each rate below its own bound", paper="Lemma 5.2", verdict="holds", observed=[1.0, 2.0],
                bound=[1, 2, 3])


def test_near_between_equal_roundoff_true():
    c = _reg()
    c.near("about half the rate", paper="Lemma 5.2", verdict="observation", observed=0.53, target=0.5, tol=0.1)
    with pytest.raises(ClaimFailed):
        c.near("about half the rate", paper="Lemma 5.2", verdict="observation", observed=0.61, target=0.5, tol=0.1)
    c.near("within a quarter of the predicted rate", paper="Lemma C.11", verdict="observation",
           observed=[0.02, 0.021], target=[0.019, 0.02], rtol=0.25)
    with pytest.raises(ClaimFailed):
        c.near("within a quarter of the predicted rate", paper="Lemma C.11", verdict="observation",
               observed=[0.02, 0.03], target=[0.019, 0.02], rtol=0.25)
    c.between("a few neurons flip per seed", paper="Lemma C.3", verdict="outside", observed=[2, 4], low=1, high=10,
              premises="d is too small")
    with pytest.raises(ClaimFailed):
        c.between("a few neurons flip per seed", paper="Lemma C.3", verdict="outside", observed=[0, 4], low=1,
                  high=10, premises="d is too small")
    c.equal("no neuron leaves its signal set", paper="Lemma C.3", verdict="holds", observed=torch.zeros(3), value=0)
    with pytest.raises(ClaimFailed):
        c.equal("no neuron leaves its signal set", paper="Lemma C.3", verdict="holds", observed=[0, 1], value=0)
    c.roundoff("the recursion equals gradient descent", paper="Lemma 5.1", observed=[1e-15, -2e-14], tol=1e-9)
    assert c.rows[-1].observed == pytest.approx(2e-14)  # the magnitude is what is bounded
    with pytest.raises(ClaimFailed):
        c.roundoff("the recursion equals gradient descent", paper="Lemma 5.1", observed=3e-9, tol=1e-9)
    c.true("the fit is monotone on every seed", paper="Lemma 5.2", verdict="holds", observed=[True, True])
    with pytest.raises(ClaimFailed):
        c.true("the fit is monotone on every seed", paper="Lemma 5.2", verdict="holds", observed=torch.tensor([True, False]))
    with pytest.raises(ValueError, match="takes booleans"):
        c.true("a number passed as a flag", paper="Lemma 5.2", verdict="holds", observed=0.7)


def test_nan_fails_instead_of_passing():
    c = _reg()
    with pytest.raises(ClaimFailed, match="NaN"):
        c.upper("the error stays below the bound", paper="Theorem 4.2", verdict="holds", observed=[0.1, math.nan],
                bound=0.2)
    with pytest.raises(ClaimFailed):
        c.near("the rate is about half", paper="Lemma 5.2", verdict="observation", observed=math.nan, target=0.5,
               tol=0.1)


# -- the rules that keep a check able to fail ------------------------------------------------------------
def test_a_loose_bound_is_refused_unless_it_is_the_papers():
    c = _reg()
    with pytest.raises(ValueError, match="100x from the observed"):
        c.upper("rho stays below 115", paper="Lemma 5.4", verdict="holds", observed=1.15, bound=115)
    with pytest.raises(ValueError, match="from the observed"):
        c.lower("some pairs pick up memorisation", paper="Lemma C.7", verdict="holds", observed=0.5, bound=1e-3)
    with pytest.raises(ValueError, match="from the observed"):  # an exact zero against a positive bound
        c.upper("no flips at all", paper="Lemma C.3", verdict="holds", observed=0.0, bound=3)
    c.upper("at most one of six runs fails", paper="Lemma C.3", verdict="holds", observed=0, bound=1)  # a count
    with pytest.raises(ValueError, match="from the observed"):
        c.upper("at most half a flip", paper="Lemma C.3", verdict="holds", observed=0.0, bound=0.5)
    c.upper("the proof's explicit noise bound holds", paper="Lemma 5.4", verdict="holds", observed=1.15, bound=115,
            paper_bound=True)
    assert c.rows[-1].paper_bound and "100x" in c.rows[-1].note
    c.upper("a sign claim: the drift is negative", paper="Lemma D.13", verdict="holds", observed=-3.0, bound=0.0)
    with pytest.raises(ValueError, match="wider than the target"):
        c.near("about 0.1", paper="Lemma 5.2", verdict="observation", observed=0.1, target=0.1, tol=0.5)
    with pytest.raises(ValueError, match="no end within 10x"):
        c.between("somewhere in a wide range", paper="Lemma C.3", verdict="observation", observed=50, low=1,
                  high=1000)


def test_a_scale_makes_the_looseness_rule_independent_of_the_run():
    """The ColoredMNIST case: two training accuracies of about 0.8 within 0.02 of each other. Judged
    against the observed difference the rule would refuse the claim on a day when they agree to
    0.0009; judged against the claim's scale it accepts it whatever the difference, and still refuses
    a bound that is loose at that scale."""
    c = _reg()
    with pytest.raises(ValueError, match="from the observed"):
        c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                observed=0.000875, bound=0.02)
    for diff in (0.000875, 0.0, 0.019):  # every value a run may give: accepted, the rule sees only the scale
        c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                observed=diff, bound=0.02, scale=0.01)
    with pytest.raises(ClaimFailed):  # and it can still fail
        c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                observed=0.03, bound=0.02, scale=0.01)
    with pytest.raises(ValueError, match="from the claim's scale 0.001"):  # loose at its own scale
        c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                observed=0.000875, bound=0.02, scale=0.001)
    with pytest.raises(ValueError, match="from the claim's scale 0.9"):  # every element is judged, not the worst
        c.lower("each probe keeps most of the digit", paper="Table 1", verdict="observation",
                observed=[0.9, 0.95], bound=[0.5, 0.05], scale=[0.6, 0.9])
    # a bound on the strict side of the scale is tight: within 0.035 of each other at a magnitude of 0.8
    c.upper("the two accuracies agree within a few points", paper="Table 1", verdict="observation",
            observed=0.0, bound=0.035, scale=0.8)
    # a range judged against the scale, whatever the observed value (an exact 0 included)
    for delta in (0.0, -0.016, 0.047):
        c.between("test and training accuracy agree within a few points", paper="Table 1", verdict="observation",
                  observed=delta, low=-0.035, high=0.06, scale=0.02)
    with pytest.raises(ValueError, match="as wide as the claim's scale"):
        c.between("test and training accuracy agree within a few points", paper="Table 1", verdict="observation",
                  observed=0.01, low=-0.5, high=0.5, scale=0.02)
    with pytest.raises(ValueError, match="no end within 10x"):  # without a scale, the old rule
        c.between("test and training accuracy agree within a few points", paper="Table 1", verdict="observation",
                  observed=0.0, low=-0.035, high=0.06)
    for bad in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="scale=.* must be a positive finite number"):
            c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                    observed=0.001, bound=0.02, scale=bad)
    with pytest.raises(ValueError, match="scale has 3 values for 2 observed"):
        c.upper("the two accuracies agree within two points", paper="Table 1", verdict="observation",
                observed=[0.001, 0.002], bound=0.02, scale=[0.01, 0.01, 0.01])


@pytest.mark.parametrize("kw, match", [
    (dict(verdict="true"), "verdict='true' is not one of"),
    (dict(paper="lemma 5.2"), "must name the paper's statement"),
    (dict(paper="Lemma C.3/C.7"), "must name the paper's statement"),
    (dict(verdict="fails"), "contradicts the premises"),
    (dict(verdict="fails", source="zhang2023mmcl", paper="Lemma 1"), "needs premises=, saying how the statement's"),
    (dict(verdict="outside", source="zhang2023mmcl", paper="Lemma 1"), "needs premises=, saying which of the"),
    (dict(verdict="holds", held=False), "disagree"),
    (dict(verdict="held"), "verdict='held' is not one of"),
    (dict(claim="x"), "state the claim in words"),
    (dict(source="Zhang et al."), "bibliography key"),
])
def test_bad_statements_are_refused_with_the_parameter_named(kw, match):
    args = dict(claim="the rate stays below the bound", paper="Lemma 5.2", verdict="holds")
    args.update(kw)
    claim = args.pop("claim")
    with pytest.raises(ValueError, match=re.escape(match)):
        _reg().upper(claim, observed=0.3, bound=0.5, **args)


def test_paper_references_accept_the_papers_numbering():
    for ref in ("Lemma 5.2", "Lemma C.11", "Lemma D.12", "Theorem 4.2 (1)", "Assumption 4.1 (6b)", "Eq. (13)",
                "Eqs. (12)", "Sec. 3.3", "Figure 1", "Table 1", "Proposition C.13", "Lemma B.1"):
        assert cl.PAPER_REF.match(ref), ref
    c = _reg()
    c.upper("the factorisation lemma holds to round-off", paper="Lemma 1", verdict="holds", observed=0.4, bound=0.5,
            source="zhang2023mmcl")
    assert c.rows[-1].source == "zhang2023mmcl"
    c.upper("the factorisation lemma holds to round-off", paper="Lemma (the loss is a factorisation)",
            verdict="holds", observed=0.4, bound=0.5, source="zhang2023mmcl")
    with pytest.raises(ValueError, match="must name the paper's statement"):  # a name alone: only for other works
        c.upper("the factorisation lemma holds to round-off", paper="Lemma (the loss is a factorisation)",
                verdict="holds", observed=0.4, bound=0.5)
    with pytest.raises(ValueError, match="cited work's statement"):
        c.upper("the factorisation lemma holds to round-off", paper="the factorisation lemma", verdict="holds",
                observed=0.4, bound=0.5, source="zhang2023mmcl")


def test_section_labels_are_checked_and_recorded():
    c = _reg()
    c.section("sec-stage1-growth")
    c.upper("the rate stays below the bound", paper="Lemma 5.2", verdict="holds", observed=0.3, bound=0.5)
    assert c.rows[-1].section == "sec-stage1-growth"
    with pytest.raises(ValueError, match="not a MyST label"):
        c.section("two words")


def test_html_carries_the_rows_and_parses_back():
    c = _reg()
    c.upper("the rate <stays> below \"the\" bound", paper="Lemma 5.2", verdict="outside", observed=[0.3, 0.4],
            bound=0.5, premises="4c fails & so on")
    c.near("about half the rate", paper="Lemma 5.2", verdict="observation", observed=0.53, target=0.5, tol=0.1)
    text = cl.render_html(c.rows)
    back = cl.parse_html("<div>" + text + "</div>" + text)
    assert len(back) == 4
    assert back[0]["claim"] == 'the rate <stays> below "the" bound' and back[0]["premises"] == "4c fails & so on"
    assert back[1]["bound_text"] == "0.5 ± 0.1" and back[0]["bound_text"] == "≤ 0.5"
    assert "outside the premises" in cl.render_text(c.rows)
    # the table comes folded, its one line counting the verdicts (the rows one click away)
    assert text.startswith("<details class='mmcl-claims-fold'><summary><b>Claims register</b>: 2 claims checked: ")
    assert "1 outside the premises, 1 our measurements</summary><table" in text and text.endswith("</details>")


def test_the_hook_shows_each_cells_claims_once(monkeypatch):
    shown = []

    class Events:
        def __init__(self):
            self.callbacks = {"post_execute": []}

        def register(self, name, cb):
            self.callbacks[name].append(cb)

        def unregister(self, name, cb):
            self.callbacks[name].remove(cb)

    class IP:
        events = Events()

    import IPython
    import IPython.display

    monkeypatch.setattr(IPython, "get_ipython", lambda: IP)
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    Claims("first")
    c = Claims("second")  # a re-run of the set-up cell replaces the hook
    assert len(IP.events.callbacks["post_execute"]) == 1
    c.upper("the rate stays below the bound", paper="Lemma 5.2", verdict="observation", observed=0.3, bound=0.5)
    IP.events.callbacks["post_execute"][0]()
    IP.events.callbacks["post_execute"][0]()  # nothing new: nothing shown
    assert len(shown) == 1 and cl.parse_html(shown[0]["text/html"])[0]["chapter"] == "second"


def test_premises_name_the_failing_conditions():
    from mmcl.experiments import single_stage1 as experiment
    from mmcl.proofs import assumptions

    cfg = experiment.config("default")
    failing = [c.key for c in assumptions.check_assumption41(cfg) if not c.holds]
    text = assumptions.premises(cfg)
    assert f"{len(failing)} of 22" in text and all(k in text for k in failing)
    assert "hold" in assumptions.premises(cfg, ("2a", "6a")) and "fails" not in assumptions.premises(cfg, ("2a",))
    assert assumptions.premises_hold(cfg, ("2a", "6a")) and not assumptions.premises_hold(cfg)
    assert not assumptions.premises_hold(cfg, ("2a", "4c"))
    with pytest.raises(ValueError, match="not conditions of Assumption 4.1"):
        assumptions.premises(cfg, ("9z",))


# -- the chapters: no check outside the register ---------------------------------------------------------
def _code_cells(path: Path):
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", path.read_text(), flags=re.S)
    return ["\n".join("" if ln.startswith((":", "%")) else ln for ln in c.splitlines()) for c in cells]


def _labels():
    return set(re.findall(r"^\(([\w-]+)\)=\s*$", "\n".join(p.read_text() for p in (ROOT / "book").glob("*.md")),
                          flags=re.M))


def _bypasses(cell: str):
    """Ways a cell could check something without the register: ``assert``, ``raise``, an ``assert*``
    function (numpy.testing, torch.testing, unittest), pytest, or exiting the kernel."""
    for node in ast.walk(ast.parse(cell)):
        if isinstance(node, (ast.Assert, ast.Raise)):
            yield ast.unparse(node)[:80]
        elif isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if re.search(r"(^|\.)(assert\w*|fail|exit|_exit)$", name) or name.startswith(("pytest.", "sys.exit")):
                yield name
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(m.split(".")[0] in ("pytest", "unittest") or m.endswith("testing") for m in mods):
                yield ast.unparse(node)


def test_the_bypass_scan_finds_what_it_must():
    found = list(_bypasses("import numpy.testing as npt\nnpt.assert_allclose(a, b)\nassert x\n"
                           "torch.testing.assert_close(a, b)\nif bad:\n    raise ValueError\nsys.exit(1)\n"))
    assert len(found) == 6, found
    assert not list(_bypasses("claims.upper('a claim here', paper='Lemma 5.2', verdict='holds', observed=1, bound=2)"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_assert_only_through_the_register(chapter):
    bare = [b for cell in _code_cells(chapter) for b in _bypasses(cell)]
    assert not bare, f"{chapter.name}: checks outside the claims register (use env.claims): {bare}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_state_their_claims_well(chapter):
    labels = _labels()
    calls = 0
    for cell in _code_cells(chapter):
        for node in ast.walk(ast.parse(cell)):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "claims"):
                continue
            name = node.func.attr
            assert name in METHODS, f"{chapter.name}: claims.{name} is not a method of the register"
            kw = {k.arg: k.value for k in node.keywords}
            if name in ("setting", "constants"):
                continue
            if name == "section":
                label = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                assert label in labels, f"{chapter.name}: claims.section({label!r}) names no label of the book"
                continue
            calls += 1
            other = "source" in kw and not (isinstance(kw["source"], ast.Constant) and kw["source"].value == cl.MAIN)
            ref = cl.OTHER_REF if other else cl.PAPER_REF
            for key, check in (("verdict", lambda v: v in cl.TYPED_VERDICTS), ("paper", ref.match)):
                if isinstance(kw.get(key), ast.Constant):
                    assert check(kw[key].value), f"{chapter.name}: {key}={kw[key].value!r} in {ast.unparse(node)[:90]}"
    assert calls >= 3, f"{chapter.name} states {calls} claims through the register; its checks must use env.claims"


# -- the Sphinx extension builds the Claims page from the pages' outputs --------------------------------
def test_the_extension_collects_rows_into_the_claims_page(tmp_path):
    sphinx_app = pytest.importorskip("sphinx.application")
    c = _reg()
    c.section("sec-growth")
    c.upper("the rate stays below the guaranteed rate", paper="Lemma 5.2", verdict="outside", observed=0.02,
            bound=0.04, premises="4c fails")
    c.section("")
    c.roundoff("the recursion equals gradient descent", paper="Lemma 5.1", observed=1e-15, tol=1e-9)
    c.upper("the factorisation holds", paper="Lemma 1", verdict="holds", observed=0.4, bound=0.5,
            source="zhang2023mmcl")
    src = tmp_path / "src"
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['mmcl.booksupport.sphinx_ext']\nhtml_theme = 'basic'\n")
    (src / "references.bib").write_text("@inproceedings{zhang2023mmcl,\n  title = {T},\n"
                                        "  author = {Zhang, Qi and Wang, Yifei and Wang, Yisen},\n  year = {2023},\n}\n")
    (src / "index.rst").write_text("Book\n====\n\n.. toctree::\n\n   book/chapter\n   book/claims\n")
    table = cl.render_html(c.rows)
    (src / "book" / "chapter.rst").write_text(
        "A chapter\n=========\n\n.. _sec-growth:\n\nGrowth\n------\n\nText.\n\nCheck\n-----\n\n"
        ".. raw:: html\n\n   " + table + "\n")
    (src / "book" / "claims.rst").write_text("Claims\n======\n\n.. mmcl-claims::\n")
    warnings = io.StringIO()
    app = sphinx_app.Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html",
                            status=None, warning=warnings, freshenv=True)
    app.build()
    page = (tmp_path / "out" / "book" / "claims.html").read_text()
    assert "3 claims from 1 chapters" in page
    # grouped in the paper's order, the other work's statement last, each row linked to its section
    assert page.index("Lemma 5.1") < page.index("Lemma 5.2") < page.index("Lemma 1 of Zhang et al. (2023)")
    assert "href='chapter.html#sec-growth'" in page
    assert "chapter.html#check" in page
    assert "failing premises here: 1a, 1b" in page and "outside the premises" in page
    assert "4c fails" not in page  # a check's own words on the premises give way to the computed list
    assert page.count("class='mmcl-premise-legend'") == 1  # the keys explained once
    # the at-a-glance table links each statement to its rows
    assert "href='#claims-lemma-5-2'" in page and "id='claims-lemma-5-2'" in page
    assert page.count("data-verdict='outside'") == 2 and "mmcl-claims.js" in page  # the filter box and its row
    assert "label of the book" not in warnings.getvalue()
    # a label that does not exist is a warning (an error in the book's -W build)
    c2 = _reg()
    c2.section("sec-missing")
    c2.upper("the rate stays below the guaranteed rate", paper="Lemma 5.2", verdict="holds", observed=0.02, bound=0.04)
    (src / "book" / "chapter.rst").write_text("A chapter\n=========\n\n.. raw:: html\n\n   "
                                              + cl.render_html(c2.rows) + "\n")
    warnings = io.StringIO()
    app = sphinx_app.Sphinx(str(src), str(src), str(tmp_path / "out2"), str(tmp_path / "doctrees2"), "html",
                            status=None, warning=warnings, freshenv=True)
    app.build()
    assert "section='sec-missing'" in warnings.getvalue()


# -- verdicts computed from the premises of the statement at the setting -------------------------
@pytest.fixture
def tiny_blueprint(monkeypatch):
    """A blueprint of three statements: 'Lemma 9.1' (premise 4a: n >= 2500 log 40), 'Lemma 9.2' (no
    premises of its own, its proof uses Lemma 9.1) and 'Lemma 9.3' (none at all)."""
    from mmcl.proofs import blueprint as bp

    ok = bp.Audit("valid")
    sts = (bp.Statement("Lemma 9.1", "lemma", "a lemma with a premise", ok, premises=("4a",)),
           bp.Statement("Lemma 9.2", "lemma", "a lemma whose proof uses it", ok, proof_uses=("Lemma 9.1",)),
           bp.Statement("Lemma 9.3", "lemma", "a lemma without premises", ok))
    monkeypatch.setattr(bp, "STATEMENTS", sts)
    return bp


def test_verdicts_are_computed_from_the_premises_at_the_setting(tiny_blueprint):
    import mmcl

    small, large = mmcl.SyntheticConfig(), mmcl.SyntheticConfig(n=10000, M=45)  # 4a: n >= 9,222
    c = Claims("test", display=False)
    c.setting(small)
    c.upper("the rate stays below the bound", paper="Lemma 9.2", held=True, observed=0.3, bound=0.5)
    assert (c.rows[-1].verdict, c.rows[-1].failing) == ("beyond", "4a")  # inherited through the proof
    c.upper("the rate stays below the bound", paper="Lemma 9.2", held=False, observed=0.3, bound=0.5)
    assert c.rows[-1].verdict == "outside"
    c.upper("the rate stays below the bound", paper="Lemma 9.1", held=True, observed=0.3, bound=0.5, setting=large)
    assert (c.rows[-1].verdict, c.rows[-1].failing) == ("holds", "")
    c.upper("the rate stays below the bound", paper="Lemma 9.1", held=False, observed=0.3, bound=0.5, setting=large)
    assert c.rows[-1].verdict == "fails"
    # over several settings: the premises must hold at every one for 'holds'/'fails'
    c.upper("the rate stays below the bound", paper="Lemma 9.1", held=True, observed=0.3, bound=0.5,
            setting=[large, small])
    assert c.rows[-1].verdict == "beyond"
    # a statement without premises needs no setting; our measurement is never judged
    c.setting(None)
    c.upper("the rate stays below the bound", paper="Lemma 9.3", held=True, observed=0.3, bound=0.5)
    assert c.rows[-1].verdict == "holds"
    c.near("about half the rate", paper="Lemma 9.1", verdict="observation", observed=0.5, target=0.5, tol=0.1)
    assert c.rows[-1].verdict == "observation"
    with pytest.raises(ValueError, match="give the setting"):
        c.upper("the rate stays below the bound", paper="Lemma 9.1", held=True, observed=0.3, bound=0.5)
    # a typed verdict that contradicts the computed premises is an error
    with pytest.raises(ValueError, match="contradicts the premises.*4a"):
        c.upper("the rate stays below the bound", paper="Lemma 9.1", verdict="fails", observed=0.3, bound=0.5,
                setting=small, premises="held")
    with pytest.raises(ValueError, match="contradicts the premises: every premise"):
        c.upper("the rate stays below the bound", paper="Lemma 9.1", verdict="outside", observed=0.3, bound=0.5,
                setting=large, premises="4a")
    c.upper("the rate stays below the bound", paper="Lemma 9.1", verdict="outside", observed=0.3, bound=0.5,
            setting=small, premises="4a fails")
    assert c.rows[-1].verdict == "outside"
    with pytest.raises(ValueError, match="say what the check observed"):
        c.upper("the rate stays below the bound", paper="Lemma 9.3", observed=0.3, bound=0.5)
    with pytest.raises(ValueError, match="setting must be"):
        c.setting("Figure 1")


def test_premises_out_of_reach_are_named_in_the_verdict(tiny_blueprint, monkeypatch):
    """Where the only failing premises are ones no run can reach (C.10: n of 1e11), the verdict says
    that every reachable premise held -- but only where some premise of the statement did hold."""
    import mmcl

    bp = tiny_blueprint
    ok = bp.Audit("valid")
    monkeypatch.setattr(bp, "STATEMENTS", bp.STATEMENTS + (
        bp.Statement("Lemma 9.4", "lemma", "needs 4a and C.10", ok, premises=("4a", "C.10")),
        bp.Statement("Lemma 9.5", "lemma", "needs C.10 alone", ok, premises=("C.10",))))
    large = mmcl.SyntheticConfig(n=10000, M=45)  # 4a holds, C.10 (n >= 1.9e11) does not
    c = Claims("test", display=False).setting(large)
    c.upper("the rate stays below the bound", paper="Lemma 9.4", held=True, observed=0.3, bound=0.5)
    assert (c.rows[-1].verdict, c.rows[-1].failing) == ("reach-holds", "C.10")
    c.upper("the rate stays below the bound", paper="Lemma 9.4", held=False, observed=0.3, bound=0.5)
    assert c.rows[-1].verdict == "reach-fails"
    c.upper("the rate stays below the bound", paper="Lemma 9.4", held=False, observed=0.3, bound=0.5,
            setting=mmcl.SyntheticConfig())
    assert c.rows[-1].verdict == "outside"  # 4a fails too: not only out of reach
    # a statement whose only premise is out of reach held nowhere: no "every reachable premise" verdict
    c.upper("the rate stays below the bound", paper="Lemma 9.5", held=False, observed=0.3, bound=0.5)
    assert (c.rows[-1].verdict, c.rows[-1].failing) == ("outside", "C.10")
    assert bp.measured_verdict(["reach-holds", "outside"]) == "reach-holds"
    assert bp.measured_verdict(["reach-fails", "holds"]) == "reach-fails"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_check_cells_keep_their_output(chapter):
    """A cell that states claims must show its output: the claims table it prints is what the Claims
    page, the Blueprint and the reading guide's findings collect (a removed output never reaches them)."""
    cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", chapter.read_text(), flags=re.S)
    hidden = [c.splitlines()[0] for c in cells
              if re.search(r"^claims\.(upper|lower|between|near|equal|roundoff|true)\(", c, flags=re.M)
              and re.search(r"^:tags:.*\b(remove-cell|remove-output)\b", c, flags=re.M)]
    assert not hidden, f"{chapter.name}: check cells whose output is removed: {hidden}"
