"""The paper's blueprint (mmcl.proofs.blueprint): the graph, the premises each statement's proof uses, the
verdicts computed from them, and the analytic reasons behind the proof gaps."""
import glob
import math
import os
import re

import pytest
import sympy as sp
import torch

import mmcl
from mmcl.experiments.theorems_regime import RegimeScaling, regime_config
from mmcl.proofs import blueprint as B
from mmcl.proofs.assumptions import AssumptionConfig
from mmcl.proofs.assumptions import EXTRA_PREMISES, check_assumption41, premise_conditions

BOOK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "book")
NAMED = re.compile(r"^(Lemma|Theorem|Proposition|Appendix|Assumption|Sec\. 3\.3)")


def _book_text():
    return {f: open(f, encoding="utf-8").read() for f in sorted(glob.glob(os.path.join(BOOK, "*.md")))}


def _regime_tilted(n=10000):
    cfg = regime_config(n, RegimeScaling(d_rule="b2"), for_span=False)
    return cfg.replace(nu_cos=cfg.mu_norm / (cfg.nu_norm * math.sqrt(cfg.d)))


# --------------------------------------------------------------------------------------------
# the graph
# --------------------------------------------------------------------------------------------
def test_the_blueprint_is_a_dag_of_unique_keys():
    B.check_blueprint()
    keys = [s.key for s in B.STATEMENTS]
    assert len(keys) == len(set(keys))
    for src, dst, kind in B.edges():
        assert kind in ("uses", "proof") and src in keys and dst in keys


def test_check_blueprint_rejects_a_cycle_an_unknown_edge_and_a_duplicate():
    a = B.Statement("X", "lemma", "x", B.Audit("valid"), proof_uses=("Y",))
    b = B.Statement("Y", "lemma", "y", B.Audit("valid"), uses=("X",))
    with pytest.raises(ValueError, match="cycle"):
        B.check_blueprint([a, b])
    with pytest.raises(ValueError, match="not a statement"):
        B.check_blueprint([a])
    with pytest.raises(ValueError, match="duplicate"):
        B.check_blueprint([b.__class__("Y", "lemma", "y", B.Audit("valid")), B.Statement("Y", "lemma", "z", B.Audit("valid"))])


def test_every_node_the_brief_names_is_there_with_its_kind():
    want = (["Sec. 3.3"] + [f"Assumption 4.1 ({k})" for k in range(1, 8)]
            + [f"Lemma 5.{k}" for k in range(1, 5)] + [f"Lemma B.{k}" for k in range(1, 6)]
            + [f"Lemma C.{k}" for k in range(1, 19) if k != 13] + ["Proposition C.13"]
            + [f"Lemma D.{k}" for k in range(1, 16)] + ["Appendix C.3", "Appendix D.3"]
            + ["Theorem 4.2 (1)", "Theorem 4.2 (2)", "Theorem 4.3 (1)", "Theorem 4.3 (2)"])
    keys = {s.key: s for s in B.STATEMENTS}
    missing = [k for k in want if k not in keys]
    assert not missing, missing
    assert {keys[k].kind for k in want if k.startswith("Assumption")} == {"assumption"}
    assert keys["Appendix C.3"].kind == keys["Appendix D.3"].kind == "step"
    assert keys["Proposition C.13"].kind == "proposition"
    assert {keys[k].kind for k in want if k.startswith("Theorem")} == {"theorem"}


def test_assumption_items_carry_exactly_their_condition_keys():
    items = {}
    for c in check_assumption41(mmcl.SyntheticConfig()):
        items.setdefault(int(c.key[0]), []).append(c.key)
    for k, ks in items.items():
        assert B.statement(f"Assumption 4.1 ({k})").premises == tuple(ks)
    used = {k for s in B.STATEMENTS for k in s.premises}
    assert set(EXTRA_PREMISES) <= used
    assert B.statement("Sec. 3.3").premises == ("3.3",)


def test_every_register_name_of_a_statement_resolves():
    names = set()
    for text in _book_text().values():
        names |= set(re.findall(r'paper="([^"]*)"', text))
    named = sorted(n.strip() for n in names if NAMED.match(n.strip()))
    assert "Lemma D.3 (3)" in named and "Theorem 4.3" in named  # the parse saw the rows
    unresolved = [n for n in named if not B.resolve(n)]
    assert not unresolved, unresolved
    assert [s.key for s in B.resolve("Theorem 4.3")] == ["Theorem 4.3 (1)", "Theorem 4.3 (2)"]
    assert [s.key for s in B.resolve("Assumption 4.1 (6b)")] == ["Assumption 4.1 (6)"]
    assert len(B.resolve("Assumption 4.1")) == 7
    assert B.resolve("Figure 1") == ()


def test_every_section_is_a_label_of_the_book():
    labels = set()
    for text in _book_text().values():
        labels |= set(re.findall(r"^\((sec-[^)]*)\)=", text, re.M))
    assert len(labels) > 50
    bad = [(s.key, s.section) for s in B.STATEMENTS if s.section and s.section not in labels]
    assert not bad, bad
    # the statements the book discusses have one
    for k in ("Lemma 5.2", "Lemma 5.4", "Lemma D.13", "Appendix D.3", "Theorem 4.3 (2)", "Sec. 3.3", "Lemma B.1"):
        assert B.statement(k).section


# --------------------------------------------------------------------------------------------
# premises
# --------------------------------------------------------------------------------------------
def test_premise_keys_are_transitive():
    assert "C.10" not in B.premise_keys("Theorem 4.2 (1)", transitive=False)
    assert "C.10" in B.premise_keys("Theorem 4.2 (1)")  # Lemma 5.2 -> Lemma C.11 -> Lemma C.10
    assert "C.10" in B.premise_keys("Lemma 5.2") and "C.10" in B.premise_keys("Lemma C.11")
    for k in ("Theorem 4.2 (2)", "Theorem 4.3 (2)"):
        assert "3.3" in B.premise_keys(k)
    for k in ("Theorem 4.2 (1)", "Theorem 4.3 (1)"):
        assert "3.3" not in B.premise_keys(k)
    # D.8 is cited by no later proof (Lemma 5.4 uses (45) of D.9, whose proof cites D.1 and D.2 only), so
    # neither item 4b nor Lemma D.6's condition is a premise of a theorem; D.4's requirement on C_l is
    assert "4b" not in B.premise_keys("Theorem 4.3 (1)") and "D.6" not in B.premise_keys("Theorem 4.3 (2)")
    assert "D.4" in B.premise_keys("Theorem 4.3 (2)") and "D.6" in B.premise_keys("Lemma D.8")


def test_single_and_multi_modal_chains_do_not_borrow_each_others_conditions():
    single, multi = set(B.premise_keys("Theorem 4.2 (2)")), set(B.premise_keys("Theorem 4.3 (2)"))
    assert not single & {"4b", "6b", "7a", "7b", "7c", "1b~"}
    assert not multi & {"6a", "6a'", "C.10"}
    assert {"6a", "6a'"} <= single and {"6b", "7b", "7c", "1b~"} <= multi


def test_premise_edges_link_each_key_to_the_item_that_states_it():
    pe = B.premise_edges()
    assert ("Assumption 4.1 (6)", "Lemma 5.2", ("6a", "6a'")) in pe
    assert ("Sec. 3.3", "Appendix D.3", ("3.3",)) in pe
    for item, st, ks in pe:
        assert set(ks) <= set(B.statement(item).premises) and set(ks) <= set(B.statement(st).premises)


# --------------------------------------------------------------------------------------------
# verdicts
# --------------------------------------------------------------------------------------------
FIG1_FAILING = {"1a", "1b", "1b~", "1d", "3a", "4a", "4b", "4c", "6b", "7b", "7c", "3.3", "C.6", "C.10", "D.6"}


def test_the_conditions_that_fail_at_figure_1_and_in_the_regime():
    cfg = mmcl.SyntheticConfig()
    bad = {c.key for c in check_assumption41(cfg) + premise_conditions(cfg) if not c.holds}
    assert bad == FIG1_FAILING
    reg = _regime_tilted()
    assert {c.key for c in check_assumption41(reg) + premise_conditions(reg) if not c.holds} == {"4b", "C.10", "D.6"}


def test_verdicts_at_figure_1():
    cfg = mmcl.SyntheticConfig()
    v, bad = B.verdict(True, "Theorem 4.3 (2)", cfg)
    assert v == "beyond" and set(bad) == FIG1_FAILING & set(B.premise_keys("Theorem 4.3 (2)"))
    assert "3.3" in bad and "4b" not in bad
    assert B.verdict(False, "Theorem 4.3 (2)", cfg)[0] == "outside"
    v, bad = B.verdict(True, "Lemma 5.2", cfg)
    assert v == "beyond" and "C.10" in bad and "6b" not in bad  # a single-modal lemma is not judged by 6b
    assert B.verdict(True, "Lemma B.1", cfg) == ("holds", ())
    assert B.verdict(False, "Lemma B.1", cfg) == ("fails", ())
    assert B.verdict(None, "Theorem 4.3 (2)", cfg) == ("observation", ())
    assert B.failing_premises("Lemma B.2", cfg) == ("1b",)


def test_verdicts_in_the_regime_where_only_4b_c10_and_d6_fail():
    cfg = _regime_tilted()
    assert B.verdict(True, "Sec. 3.3", cfg) == ("holds", ())
    assert B.verdict(True, "Lemma D.4", cfg) == ("holds", ())  # with the paper's C_l = 1.01
    assert B.verdict(False, "Lemma D.4", cfg) == ("fails", ())
    # no proof on Theorem 4.3 (2)'s path uses 4b or D.6: with the paper's constants every premise holds
    assert B.verdict(False, "Theorem 4.3 (2)", cfg) == ("fails", ())
    # with the C_l a run measures at T1 (of the order of M), item 4c and Lemma D.4's requirement fail
    measured = AssumptionConfig(c_ell=cfg.M)
    assert B.verdict(False, "Theorem 4.3 (2)", cfg, measured) == ("outside", ("4c", "D.4"))
    # C.10 is out of any run's reach: the verdict says that every reachable premise held
    assert B.verdict(True, "Theorem 4.2 (2)", cfg) == ("reach-holds", ("C.10",))
    assert B.verdict(True, "Lemma D.8", cfg) == ("reach-holds", ("D.6",))
    # a list of settings: a premise failing at any of them counts
    assert B.verdict(True, "Lemma D.4", [cfg, mmcl.SyntheticConfig()])[0] == "beyond"


def test_a_statement_without_premises_needs_no_setting_and_one_with_them_does():
    assert B.premise_keys("Lemma C.9") == ()
    assert B.verdict(True, "Lemma C.9") == ("holds", ())
    assert B.verdict(False, "Lemma C.9") == ("fails", ())
    with pytest.raises(ValueError, match="setting"):
        B.verdict(True, "Lemma 5.2")
    with pytest.raises(ValueError, match="held"):
        B.verdict(1, "Lemma C.9")


# --------------------------------------------------------------------------------------------
# the audits
# --------------------------------------------------------------------------------------------
def test_every_gap_has_a_step_and_a_reason_and_the_schema_enforces_it():
    for s in B.gaps("gap-inside") + B.gaps("gap-outside"):
        assert s.audit.step and s.audit.reason, s.key
    with pytest.raises(ValueError, match="step"):
        B.Audit("gap-inside", reason="no step")
    with pytest.raises(ValueError, match="status"):
        B.Audit("wrong")
    for s in B.STATEMENTS:
        assert s.summary and len(s.audit.reason) <= 450, s.key


def test_the_gaps_the_audit_found():
    inside = {s.key for s in B.gaps("gap-inside")}
    assert {"Lemma C.9", "Lemma C.10", "Lemma D.3", "Lemma D.13", "Appendix D.3", "Lemma 5.4"} <= inside
    # an audit judges a statement's own steps: C.11 and D.14 are valid proofs resting on C.10's and D.13's gaps
    for key, root in (("Lemma C.11", "Lemma C.10"), ("Lemma D.14", "Lemma D.13")):
        assert B.statement(key).audit.status == "valid" and root in B.rests_on(key)
    assert not B.gaps("not-audited")  # every proof of the paper is audited
    assert B.statement("Lemma B.1").audit.status == "valid"  # a wrong constant that only weakens a bound
    assert B.statement("Lemma D.1").audit.status == "valid"  # asserts only that some C_l exists
    assert "Appendix D.3" in B.rests_on("Theorem 4.3 (2)") and "Lemma C.10" in B.rests_on("Theorem 4.2 (1)")
    assert B.rests_on("Lemma C.9") == ()
    with pytest.raises(ValueError, match="status"):
        B.rests_on("Lemma C.9", "bad")


def test_lemma_c9_reason_the_mean_of_b_grows_like_n():
    """E B_r,+(0) = (n/2) E[X 1{X > 0}] with X ~ N(0, s^2), s = sigma0 sigma_xi sqrt(d): sympy gives
    s/sqrt(2 pi); it passes C.9's bound s sqrt(n)(1 + sqrt(log(1/delta)/2)) from n = 108 on (delta = 0.1)."""
    x, s = sp.symbols("x s", positive=True)
    half = sp.integrate(x * sp.exp(-x ** 2 / (2 * s ** 2)) / (sp.sqrt(2 * sp.pi) * s), (x, 0, sp.oo))
    assert sp.simplify(half - s / sp.sqrt(2 * sp.pi)) == 0
    k = 1 + math.sqrt(math.log(10) / 2)
    n_star = (2 * math.sqrt(2 * math.pi) * k) ** 2
    assert 107 < n_star < 109
    # Monte Carlo at Figure 1's sigma0, sigma_xi, d and n = 1000: the bound fails on every neuron
    cfg = mmcl.SyntheticConfig()
    g = torch.Generator().manual_seed(0)
    n, m = 1000, 20
    w = torch.randn(m, cfg.d, generator=g, dtype=torch.float64) * cfg.sigma0
    xi = torch.randn(n // 2, cfg.d, generator=g, dtype=torch.float64) * cfg.sigma_xi  # the class y = +1
    b = torch.relu(w @ xi.T).sum(-1)
    sc = cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d)
    assert bool((b > sc * math.sqrt(n) * k).all())
    assert float(b.mean()) == pytest.approx(n / 2 * sc / math.sqrt(2 * math.pi), rel=0.05)


def test_lemmas_c10_and_d7_reasons_the_thresholds_do_not_shrink_with_n():
    unit = 1 / (2 * math.sqrt(2 * math.pi))  # B/n in units of sigma0 sigma_xi sqrt(d), single-modal class total
    assert 202 * 1.01 * unit > 40  # Lemma C.11's C = 202 C_l: over 40 standard deviations
    p_clear = 1 - math.erf(unit / 2 / math.sqrt(2))  # D.7: B_r,+,+/n is half that, about 0.1 sd
    assert p_clear == pytest.approx(0.92, abs=0.005)
    assert p_clear ** 30 < 0.1


def test_lemma_c12_statement_has_room_the_proofs_intermediate_constant_does_not():
    mean = 1 / math.sqrt(2 * math.pi)  # (1/m) sum_r relu(<w_r, xi_i>) -> sigma0 ||xi_i|| / sqrt(2 pi)
    assert mean > 0.2 and mean < 0.4
    assert 0.4 * math.sqrt(0.5) < 1  # ||xi_i|| >= sigma_xi sqrt(d/2) does not give >= sigma0 sigma_xi sqrt(d)


def test_a_check_of_a_premise_itself_is_not_judged_by_the_premises():
    """A row about an item of Assumption 4.1 (its constant is what the proof gives) concludes nothing
    from premises: it holds or fails as it stands, at any setting."""
    fig1 = mmcl.SyntheticConfig()
    assert B.verdict(True, "Assumption 4.1 (7)", fig1) == ("holds", ())
    assert B.verdict(True, "Assumption 4.1 (7b)", fig1) == ("holds", ())
    assert B.verdict(True, "Lemma 5.4", fig1)[0] == "beyond"
