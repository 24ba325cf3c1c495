"""The paper's blueprint: every numbered statement the book discusses, what it and its proof use, the
premises its proof uses, and our audit of the proof.

Modelled on the blueprint of a formalisation project (a dependency graph of definitions, lemmas and
theorems, where one look says which steps stand), for a paper whose proofs are read, not formalised:

* a :class:`Statement` is one node: its ``key`` is the paper's name for it (``"Lemma C.10"``,
  ``"Theorem 4.3 (2)"``, ``"Sec. 3.3"``, ``"Assumption 4.1 (6)"``), the name the claims register's
  ``paper=`` uses; ``uses`` are the statements its *statement* refers to (solid edges), ``proof_uses``
  those only its *proof* uses (dotted edges); ``premises`` are the keys of the explicit conditions its
  own proof uses, evaluable at a configuration (:func:`premise_keys` adds those of everything the
  proof uses, transitively);
* an :class:`Audit` is our reading of the proof: ``"valid"`` as written, ``"gap-inside"`` (a step
  that fails although every premise holds: no premise can repair it), ``"gap-outside"`` (a step that
  needs more than the premises give only where a premise fails, e.g. a bound that needs ``n`` larger
  than any run reaches), or ``"not-audited"``; with the step, the analytic reason (a formula the
  reader can check) and whether the conclusion may still hold by another route, with the
  measurement that says so.

Conventions of the data below: an edge is drawn where a proof uses a statement by number, by one of its
numbered equations (the proof of Lemma 5.2 uses "(21)" of Lemma C.4) or by the quantity it defines (the
stage-2 lemmas' ``T*`` is Proposition C.13's); "Under Assumption 4.1" in a statement's header is not an edge:
the premises a statement carries are the explicit conditions its own proof uses, so that a single-modal
lemma is not judged by a multi-modal condition (:func:`premise_edges` links them to the item that states
them).  An audit is of the statement's own steps, given the statements it uses; what it inherits from
statements with a gap is :func:`rests_on`.

The register (:mod:`mmcl.booksupport.claims`) evaluates a statement's premises at the setting a check
measured and derives the row's verdict from them (:func:`verdict`); the book's Blueprint page draws
the graph and lists one line per statement.

Public: every name in ``__all__``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from mmcl.model.config import SyntheticConfig, check_config
from mmcl.proofs.assumptions import (EXTRA_PREMISES, AssumptionConfig, Condition, check_assumption41,
                                     premise_conditions)

__all__ = ["KINDS", "AUDITS", "AUDIT_TEXT", "Audit", "Statement", "STATEMENTS", "statement", "resolve",
           "premise_keys", "failing_premises", "verdict", "VERDICTS", "VERDICT_TEXT", "UNREACHABLE", "edges", "premise_edges",
           "gaps", "rests_on", "check_blueprint", "layout", "measured_verdict", "short_label"]

KINDS = ("definition", "assumption", "lemma", "proposition", "theorem", "step")
AUDITS = ("valid", "gap-inside", "gap-outside", "not-audited")
AUDIT_TEXT = {"valid": "valid as written", "gap-inside": "gap inside the premises",
              "gap-outside": "gap only where a premise fails", "not-audited": "not audited"}
#: The verdicts a check's row can carry (computed by :func:`verdict`, never typed).
VERDICTS = ("holds", "reach-holds", "beyond", "fails", "reach-fails", "outside", "observation")
VERDICT_TEXT = {"holds": "holds", "reach-holds": "holds where every reachable premise holds",
                "beyond": "holds beyond its premises", "fails": "fails",
                "reach-fails": "fails where every reachable premise holds",
                "outside": "outside the premises", "observation": "our measurement"}
#: The premises no computation can reach, each with its reason (conditions on ``n`` far beyond what a
#: run can hold, whose Gram matrix has ``n^2`` entries).  Where only these fail, a verdict says so.
UNREACHABLE = {"4b": "n >= 1.28e6 log(4/delta), about 2.9 million at delta = 0.1 (proof of Lemma D.8)",
               "C.10": "n >= 8 C^2 log(1/delta)/(-log(1 - (delta/m)^2)), about 1.9e11 (Lemma C.10)"}

_ALL_KEYS = None


def _condition_keys() -> Tuple[str, ...]:
    global _ALL_KEYS
    if _ALL_KEYS is None:
        _ALL_KEYS = tuple(c.key for c in check_assumption41(SyntheticConfig())) + EXTRA_PREMISES
    return _ALL_KEYS


@dataclass(frozen=True)
class Audit:
    """Our reading of a statement's proof (module docstring): ``status`` in ``AUDITS``, the ``step``
    it concerns, the analytic ``reason`` and the other ``route`` by which the conclusion may still
    hold (with the measurement that says so), ``""`` where there is none to give."""

    status: str
    step: str = ""
    reason: str = ""
    route: str = ""

    def __post_init__(self) -> None:
        if self.status not in AUDITS:
            raise ValueError(f"Audit.status={self.status!r} is not one of {', '.join(map(repr, AUDITS))}")
        if self.status in ("gap-inside", "gap-outside") and not (self.step and self.reason):
            raise ValueError(f"Audit.status={self.status!r} needs the step and the reason")


@dataclass(frozen=True)
class Statement:
    """One node of the blueprint (module docstring).  ``section`` is the MyST label of the book's
    section that discusses it (``""``: none yet); ``summary`` the statement in a line of our words."""

    key: str
    kind: str
    summary: str
    audit: Audit
    uses: Tuple[str, ...] = ()
    proof_uses: Tuple[str, ...] = ()
    premises: Tuple[str, ...] = ()
    section: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Statement {self.key!r}: kind={self.kind!r} is not one of {KINDS}")
        bad = [k for k in self.premises if k not in _condition_keys()]
        if bad:
            raise ValueError(f"Statement {self.key!r}: premises {bad} are not condition keys; valid: {_condition_keys()}")


# --------------------------------------------------------------------------------------------
# The statements
# --------------------------------------------------------------------------------------------
_A = Audit
_S = Statement
_A41 = tuple(f"Assumption 4.1 ({k})" for k in range(1, 8))
_NA = "not read line by line"

#: Every statement of the blueprint, in the paper's order within each stage.
STATEMENTS: Tuple[Statement, ...] = (
    # ---- definitions and premises --------------------------------------------------------------
    _S("Eq. (6)", "definition", "the single-modal InfoNCE loss: one augmented positive and M negatives per anchor",
       _A("valid", reason="a definition"), section="sec-setting-losses"),
    _S("Eq. (9)", "definition", "the multi-modal loss: the same contrast across the two encoders, symmetrised",
       _A("valid", reason="a definition"), section="sec-setting-losses"),
    _S("Eq. (11)", "definition", "each neuron is its initialisation plus a signal coefficient along mu plus one "
       "noise coefficient per training sample", _A("valid", reason="a definition: gradient descent stays in this span"),
       section="sec-single-stage1"),
    _S("Sec. 3.3", "assumption", "the OOD test signal nu is nearly orthogonal to mu: |<nu, mu>| = O(||mu||^2/sqrt d)",
       _A("valid", reason="a premise. It is an O bound: it gives no Omega lower bound on the signal a test point "
          "carries; the book reads it as Theta(||mu||^2/sqrt d), the only reading under which App. C.3/D.3 compare "
          "orders"), premises=("3.3",), section="sec-downstream-condition"),
    _S("Assumption 4.1 (1)", "assumption", "the dimension d is large against n^2, n/(sigma0 sigma_xi) and "
       "1/(sigma0 ||mu||)^2", _A("valid", reason="a premise"), premises=("1a", "1b", "1b~", "1c", "1d"),
       section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (2)", "assumption", "the step size is small against m/||mu||^2 and n m/(sigma_xi^2 d)",
       _A("valid", reason="a premise"), premises=("2a", "2b"), section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (3)", "assumption", "the initialisation scale sigma0 is small against 1/(sigma_xi sqrt d) "
       "and 1/||mu||", _A("valid", reason="a premise. It allows the init part sigma0 sigma_xi sqrt(d) of every "
       "response to be O~(1), which App. C.3/D.3 leave out"), premises=("3a", "3b", "3c"),
       section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (4)", "assumption", "the width m and the sample size n are at least polylogarithmic",
       _A("valid", reason="a premise; the proofs' constants make it n >= 9,222 (4a) and n >= 4.7 million (4b) at "
          "delta = 0.1"), premises=("4a", "4b", "4c", "4d"), section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (5)", "assumption", "the augmentation noise sigma_eps is small against ||mu|| and sigma_xi",
       _A("valid", reason="a premise"), premises=("5a", "5b"), section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (6)", "assumption", "n SNR^2 is of order one",
       _A("valid", reason="a premise; its explicit window 1.7 <= n SNR^2 <= 1.8 (6b, 6a) is derived from the "
          "proofs' rates 0.96 s (Lemma C.11) and 0.48 C_mu s (Lemma D.4), not from measured ones (0.5-0.57 s "
          "single-modal): with the measured rate the window is empty at C_mu = 2.66"),
       premises=("6a", "6a'", "6b"), section="sec-assumptions-conditions"),
    _S("Assumption 4.1 (7)", "assumption", "the second modality's signal is at least 2.66 times the first's",
       _A("valid", reason="a premise"), premises=("7a", "7b", "7c"), section="sec-assumptions-c-mu"),
    # ---- Appendix B: probability tools --------------------------------------------------------
    _S("Lemma B.1", "lemma", "a centred Gaussian lands in [-c, c] with probability at most "
       "sqrt(1 - exp(-2c^2/(pi sigma^2))) (printed with a factor 2)",
       _A("valid", step="the equality P(|x| <= c) = 2 erf(c/(sqrt2 sigma))",
          reason="the printed equality has a spurious factor 2 (P = erf(c/(sqrt2 sigma)), sympy); erf(z) <= "
          "sqrt(1 - exp(-4z^2/pi)) makes the printed upper bound hold with a factor 2 to spare: a wrong constant "
          "that only weakens the bound, not a gap"), section="sec-assumptions-b1"),
    _S("Lemma B.2", "lemma", "every neuron's initial overlap with mu (and mu~) clears a margin of order "
       "n ||mu|| /(sigma_xi d), once d is large (1b)",
       _A("valid", reason="the algebra from Lemma B.1 to d >= 400 n/(sigma0 sigma_xi) sqrt(log(6n/delta)/"
          "(-pi log(1 - delta^2/4m^2))) checks, and a union bound over m neurons finishes it",
          route="where 1b fails (every run) the probability that all neurons clear the margin is below "
          "10^(-10^8) (sec-assumptions-b2)"),
       proof_uses=("Lemma B.1",), premises=("1b",), section="sec-assumptions-b2"),
    _S("Lemma B.3", "lemma", "with random labels, each class holds n/2 +- sqrt(n log(4/delta)/2) samples",
       _A("valid", reason="Hoeffding's inequality (cited)")),
    _S("Lemma B.4", "lemma", "initial overlaps of every neuron with mu, xi_i and eps_i are at most their Gaussian "
       "scale times sqrt(log), and the largest ones are at least a constant fraction of it",
       _A("valid", reason="Gaussian tail bounds with a union bound (cited); the lower bounds need m >= "
          "Omega(log(1/delta)), which 4d reads with constant 1"), premises=("4d",)),
    _S("Lemma B.5", "lemma", "the noise vectors have norms sigma_xi sqrt(d) up to a factor sqrt(3/2) and nearly "
       "orthogonal overlaps with each other and with mu", _A("valid", reason="chi-square and Gaussian tail bounds "
       "with a union bound (cited)")),
    # ---- Appendix C: single-modal ---------------------------------------------------------------
    _S("Lemma 5.1", "lemma", "the signal and noise coefficients of Eq. (11) follow explicit one-step recursions "
       "under gradient descent on Eq. (6)",
       _A("valid", reason="project the gradient step onto mu and each xi_i; the recursion equals gradient "
          "descent to float64 roundoff (sec-stage1-recursion's check cell)"), uses=("Eq. (11)", "Eq. (6)"), section="sec-stage1-recursion"),
    _S("Lemma C.1", "lemma", "while the coefficients are O(1), each neuron's overlap with xi_i (mu) equals its "
       "noise (signal) coefficient up to O(sqrt(log/d) n)",
       _A("not-audited", reason=_NA), proof_uses=("Lemma B.5",), section="sec-stage1-sign-sets"),
    _S("Lemma C.2", "lemma", "while the coefficients are O(1), every loss derivative lies within a constant factor "
       "C_l of 1/(M+1)",
       _A("valid", reason="bounded coefficients bound every similarity, hence every softmax weight within a "
          "constant factor; the lemma names no constant"),
       proof_uses=("Lemma C.1", "Lemma B.4", "Lemma B.5"), premises=("1a", "3a", "3c", "5a", "5b"),
       section="sec-stage1-growth"),
    _S("Lemma C.3", "lemma", "every neuron keeps the sign of its signal overlap, and its signal coefficient grows "
       "monotonically in that direction", _A("not-audited", reason=_NA,
          route="at Figure 1, where 1a and 1b fail, 1 to 10 of m = 50 neurons per seed leave their signal set "
          "(sec-stage1-sign-sets)"),
       proof_uses=("Lemma C.1", "Lemma B.2"), premises=("1b",), section="sec-stage1-sign-sets"),
    _S("Lemma C.4", "lemma", "the single-modal signal grows at most geometrically at rate 0.52 eta ||mu||^2/(m tau)",
       _A("not-audited", reason=_NA), proof_uses=("Lemma C.2", "Lemma C.3", "Lemma C.1", "Lemma B.2", "Lemma B.3"),
       premises=("4a",)),
    _S("Lemma C.5", "lemma", "each neuron's overlap with the augmentation noise is a large constant factor below "
       "its initial overlap with xi_i", _A("not-audited", reason=_NA),
       proof_uses=("Lemma C.1", "Lemma B.5", "Lemma B.1"), premises=("1c",)),
    _S("Lemma C.6", "lemma", "every initial overlap |<w_r(0), xi_i>| exceeds 150 sqrt(log(6n^2/delta)/d) once d "
       "is large (its own condition on d)", _A("not-audited", reason=_NA), proof_uses=("Lemma B.1",),
       premises=("C.6",), section="sec-regime-verdicts"),
    _S("Lemma C.7", "lemma", "samples a neuron starts inactive on stay inactive and are never memorised",
       _A("not-audited", reason=_NA, route="at Figure 1 (1a, 1b fail) pairs that start inactive pick up about a "
          "tenth of the largest rho (sec-stage1-sign-sets)"),
       proof_uses=("Lemma C.1", "Lemma C.6"), section="sec-stage1-sign-sets"),
    _S("Lemma C.8", "lemma", "each neuron starts active on n/4 +- sqrt(n log(4/delta)/2) samples of class +1",
       _A("valid", reason="Hoeffding's inequality for n Bernoulli(1/4) indicators, a union bound over r")),
    _S("Lemma C.9", "lemma", "the initial total activation B_r(0) of a neuron over one class is at most "
       "sigma0 sigma_xi sqrt(dn) (1 + sqrt(log(1/delta)/2))",
       _A("gap-inside", step="Bernstein's inequality centred at sigma0 sigma_xi sqrt(nd)",
          reason="B_r,+(0) sums about n/2 half-normal terms: E B = (n/2) sigma0 sigma_xi sqrt(d)/sqrt(2 pi) grows "
          "like n, the bound like sqrt(n); it fails for n > (2 sqrt(2 pi)(1 + sqrt(log(1/delta)/2)))^2 = 108 at "
          "delta = 0.1, with no premise to repair it",
          route="none needed: the correct statement is B ~ n sigma0 sigma_xi sqrt(d)/(2 sqrt(2 pi)); what fails is "
          "Lemma C.10, which uses the sqrt(n)")),
    _S("Lemma C.10", "lemma", "for any constant C and n large, every initial overlap |<w_r(0), xi_i>| exceeds "
       "C B_r(0)/n", _A("gap-inside", step="B_r(0)/n <= sigma0 sigma_xi sqrt(d)(1 + ...)/sqrt(n) -> 0 (Lemma C.9)",
          reason="with the true E B, B/n ~ sigma0 sigma_xi sqrt(d)/(2 sqrt(2 pi)) = 0.2 sigma0 sigma_xi sqrt(d) "
          "does not shrink: the C = 202 C_l that Lemma C.11 takes asks every Gaussian overlap to exceed 40 "
          "standard deviations, which fails at every n, its condition on n (2e11) or not",
          route="none: no n makes it hold; chapter 12's remark that it holds from n = 2e11 inherits Lemma C.9's "
          "error (sec-regime-verdicts)"),
       proof_uses=("Lemma C.9", "Lemma B.1"), premises=("C.10",), section="sec-regime-verdicts"),
    _S("Lemma C.11", "lemma", "each memorised noise coefficient grows geometrically at rate 0.96 eta sigma_xi^2 "
       "d/(n m tau), and the negatives' pull stays below 1 % of it",
       _A("gap-inside", step="the base case of (23): Psi_r,i(0) >= 101 C_l B_r,-(0)/(M+1), from Lemma C.10",
          reason="with M ~ n/2 it asks |<w_r(0), xi_i>| >= 202 C_l B_r,-(0)/n ~ 40 sigma0 sigma_xi sqrt(d) for every "
          "r, i (Lemma C.10): false at every n, so the '1 % negatives' induction and the rate 0.96 lose their "
          "footing; b/a = 1/2 is a ratio of derivatives and active negatives, the same at every M",
          route="memorisation still wins at Figure 1, at the measured rate 0.5-0.57 s (sec-stage1-growth)"),
       proof_uses=("Lemma C.10", "Lemma C.1", "Lemma C.2", "Lemma B.5", "Lemma C.5", "Lemma C.8"),
       premises=("1d", "4c"), section="sec-stage1-growth"),
    _S("Lemma C.12", "lemma", "at initialisation each sample's average activation over its neurons is at least "
       "0.2 sigma0 sigma_xi sqrt(d)",
       _A("valid", step="(1/m) sum_r Psi_r,i(0) >= 0.4 sigma0 ||xi_i|| >= sigma0 sigma_xi sqrt(d)",
          reason="the proof's constants are off (the mean is sigma0 ||xi_i||/sqrt(2 pi) = 0.399, and 0.4 sqrt(1/2) "
          "= 0.28, not 1), but the statement's 0.2 leaves room: E = 0.399 sigma0 sigma_xi sqrt(d); the row that "
          "fails at m = 50 rests on our constant 1 in 4d: a union over n samples needs about m >= 17 log(n/delta)",
          route="99 % of the samples meet it at Figure 1 (sec-stage1-growth)"),
       proof_uses=("Lemma B.5",), premises=("4d",), section="sec-stage1-growth"),
    _S("Lemma 5.2", "lemma", "single-modal stage 1: by T1 every sample's noise is memorised to Omega(1) while "
       "the signal stays O~(1/sqrt n)",
       _A("valid", reason="its own step compares the rates 0.52 (Lemma C.4) and 0.96 (Lemma C.11) through 6a'; it "
          "inherits Lemma C.11's gap", route="at Figure 1 the noise outgrows the signal at the measured rate "
          "0.5-0.57 s, so the conclusion holds there with a later T1 (sec-stage1-growth, sec-phase-t1)"),
       uses=("Lemma 5.1",), proof_uses=("Lemma C.4", "Lemma C.11", "Lemma C.12"), premises=("6a", "6a'"),
       section="sec-stage1-growth"),
    _S("Proposition C.13", "proposition", "every coefficient stays below log(3 M T*) up to the last admissible step",
       _A("not-audited", reason=_NA), proof_uses=("Lemma C.1", "Lemma B.5"), premises=("2a",)),
    _S("Lemma C.14", "lemma", "the squared gradient norm is at most max(||mu||^2, sigma_xi^2 d) times the loss",
       _A("not-audited", reason=_NA), proof_uses=("Proposition C.13",), section="sec-stage2-comparator"),
    _S("Lemma C.15", "lemma", "at T1 the weights are within O~(sqrt(mn)/(sigma_xi sqrt d)) of the comparator W*",
       _A("valid", reason="a triangle inequality through W(0); a typo writes ||mu|| for 1/||mu|| and the O~ hides "
          "log(1/eps); the book never discusses it"), proof_uses=("Lemma 5.2", "Lemma B.5")),
    _S("Lemma C.16", "lemma", "on [T1, T*] the comparator's positive logit exceeds 2 log(2M/eps) and every "
       "negative one stays below log(2M/eps)",
       _A("not-audited", reason=_NA + "; its proof takes the stage-1 end state (average activation >= 2) from "
          "Lemma 5.2 (Lemmas C.11-C.12); Lemma D.13 reuses the argument with Lemma 5.4's end state", route="at Figure 1 "
          "the average activation is 0.2-0.7, and no lambda meets both inequalities (sec-stage2-downstream)"),
       proof_uses=("Lemma B.5", "Lemma 5.2"), section="sec-stage2-comparator"),
    _S("Lemma C.17", "lemma", "each step brings the weights closer to W* by eta times the loss, minus eta eps",
       _A("not-audited", reason=_NA, route="with the paper's lambda it fails at every step at Figure 1, because "
          "C.16 does (sec-stage2-downstream)"),
       proof_uses=("Lemma C.16", "Lemma C.14"), section="sec-stage2-comparator"),
    _S("Lemma C.18", "lemma", "telescoping: within O~(m n/(sigma_xi^2 d eta eps)) steps after T1 some iterate has "
       "loss below 2 eps, and the signal stays O~(1/sqrt n)",
       _A("not-audited", reason="the telescoping from Lemma C.17 is immediate; the bound on gamma was not read "
          "line by line", route="the loss converges and gamma stays small in the runs although C.17 fails at "
          "every step: the conclusion holds by another route (sec-stage2-downstream)"),
       proof_uses=("Lemma C.17", "Lemma C.15", "Lemma 5.2"), section="sec-stage2-comparator"),
    _S("Appendix C.3", "step", "single-modal downstream: the test signal's response O~(1/sqrt(dn)) is swamped by "
       "the noise response Omega~(1/sqrt d), so the OOD error stays Theta(1)",
       _A("valid", step="'straightforward to check' non-separability from orders of magnitude",
          reason="a sketch, not a proof: it leaves out the init parts (sigma0 sigma_xi sqrt(d), O~(1) under "
          "Assumption 4.1(3)), which add label-free noise and so only help a lower bound on the error; under "
          "Sec. 3.3 read as Theta the comparison of orders is right",
          route="at cos 0.05, where Sec. 3.3 holds, both modes sit near chance (sec-downstream-verdicts)"),
       uses=("Sec. 3.3",), proof_uses=("Lemma 5.2", "Lemma C.18"), premises=("3.3",),
       section="sec-downstream-statements"),
    _S("Theorem 4.2 (1)", "theorem", "single-modal contrastive learning reaches training loss eps",
       _A("valid", reason="composes Lemma 5.2 and Lemma C.18; inherits their gaps"),
       uses=("Eq. (6)",), proof_uses=("Lemma 5.2", "Lemma C.18"), section="sec-single-stage2"),
    _S("Theorem 4.2 (2)", "theorem", "single-modal contrastive learning keeps an OOD test error bounded away "
       "from 0", _A("valid", reason="Appendix C.3 applied at T*; the theorem names no protocol for the linear "
          "head, and the two the book measures differ", route="where Sec. 3.3 fails (nu parallel to mu) the "
          "refit head's error is 0 at n = 100 and 1.7 % at n = 1,000 (sec-regime-verdicts)"),
       uses=("Sec. 3.3",), proof_uses=("Appendix C.3",), section="sec-downstream-statements"),
    # ---- Appendix D: multi-modal ----------------------------------------------------------------
    _S("Lemma 5.3", "lemma", "the coefficients of both encoders follow coupled one-step recursions under "
       "gradient descent on Eq. (9)",
       _A("valid", reason="projection of the gradient step; the printed statement swaps two indices, the "
          "appendix's proofs use the consistent form, which equals gradient descent to float64 roundoff"), uses=("Eq. (11)", "Eq. (9)"),
       section="sec-multimodal-recursions"),
    _S("Lemma D.1", "lemma", "while all coefficients are O(1), the multi-modal loss derivatives lie within a "
       "constant factor C_l of 1/(M+1)",
       _A("valid", reason="follows from Lemma C.2 as stated; it only asserts that some C_l exists",
          route="the contradiction the book's 'fails' row saw is Lemma D.8's choice C_l = 1.01, not this lemma "
          "(sec-regime-verdicts)"), proof_uses=("Lemma C.2",), section="sec-multimodal-t1"),
    _S("Lemma D.2", "lemma", "the two-modality version of Lemma C.1: overlaps equal coefficients up to O(sqrt(log/d) n)",
       _A("not-audited", reason=_NA), proof_uses=("Lemma C.1",), section="sec-multimodal-noise"),
    _S("Lemma D.3", "lemma", "neurons whose two encoders start with the same sign keep it and grow; neurons out "
       "of step synchronise on one side at some time",
       _A("gap-inside", step="part (1)'s set equality U_+(t) & U~_+(t) = U_+(0) & U~_+(0), and part (3)'s crossing "
          "inferred from monotonicity",
          reason="part (3) puts out-of-step neurons into U_+(t') & U~_+(t'), which part (1)'s equality forbids (it "
          "can only be an inclusion); and a monotone coefficient need not cross 0: the book's linear map has a "
          "finite saturation time, so some neurons stall (about 1 %)",
          route="4 of 493 out-of-step neurons stall in twenty seeds, the rest synchronise (sec-multimodal-sync)"),
       proof_uses=("Lemma D.2", "Lemma B.2"), premises=("1b~",), section="sec-multimodal-sync"),
    _S("Lemma D.4", "lemma", "the in-step neurons' signal grows at least geometrically at rate 0.48 C_mu eta "
       "||mu||^2/(m tau)",
       _A("gap-outside", step="(1 - l'_i) >= 1 - C_l/(M+1) >= 0.96 with Lemma D.1's C_l over all of stage 1",
          reason="needs M >= 25 C_l with the C_l of the whole of stage 1 (4c grants it with D.1's constant); in the "
          "runs M <= 45 while C_l passes 10 before T1, and the bound overtakes the measured signal before T1; 4c "
          "as we evaluate it uses C_l = 1.01, so it can read as holding where this step fails",
          route="the signal still grows past 1 by T1 in the runs, more slowly (sec-multimodal-t1)"),
       proof_uses=("Lemma D.1", "Lemma C.2", "Lemma C.3", "Lemma B.3"), premises=("1b~", "3b", "4a", "4c"),
       section="sec-multimodal-t1"),
    _S("Lemma D.5", "lemma", "the multi-modal initial class totals B_r,+,+(0) are at most "
       "(1/2) sigma0 sigma_xi sqrt(dn)(1 + sqrt(log(1/delta)/2))",
       _A("gap-inside", step="Bernstein's inequality centred at sqrt(n), as in Lemma C.9",
          reason="E B_r,+,+(0) = (n/4) sigma0 sigma_xi sqrt(d)/sqrt(2 pi) grows like n; the bound fails for n > 108 "
          "at delta = 0.1")),
    _S("Lemma D.6", "lemma", "the initial class totals exceed a threshold of order sqrt(log/d) once d is large",
       _A("not-audited", reason=_NA), proof_uses=("Lemma B.1",)),
    _S("Lemma D.7", "lemma", "for n large every initial overlap |<w_r(0), xi_i>| exceeds B_r,+,+(0)/n",
       _A("gap-inside", step="B_r,+,+(0)/n -> 0 from Lemma C.9 (D.5's analogue)",
          reason="B/n ~ sigma0 sigma_xi sqrt(d)/(4 sqrt(2 pi)) = 0.1 standard deviations at every n; each overlap "
          "clears it with probability 0.92, all m n of them with probability 0.92^(mn), near 0 once mn > 30"),
       proof_uses=("Lemma C.9", "Lemma D.5", "Lemma B.1")),
    _S("Lemma D.8", "lemma", "the multi-modal noise totals grow at most at rate 1.05 eta/(n m tau) per step",
       _A("gap-inside", step="'by choosing C_l = 1.01'",
          reason="C_l is Lemma D.1's, not a free choice: up to T1 Lemma 5.4 makes the signal Omega(1), so the "
          "similarities are Theta(1)/tau and C_l = e^(Theta(1)/tau); measured C_l(T1) is 50-180 at n = 100-316 and "
          "every tau tried, and grows with n",
          route="the noise grows at about 0.5 s, below the bound's rate (sec-multimodal-noise)"),
       proof_uses=("Lemma C.2", "Lemma C.1", "Lemma B.5", "Lemma C.8", "Lemma D.6", "Lemma D.1"),
       premises=("1d", "4b", "4c"), section="sec-regime-verdicts"),
    _S("Lemma D.9", "lemma", "multi-modal noise in stage 1: inactive pairs stay unmemorised and the active ones grow "
       "at most at rate 1.06 eta sigma_xi^2 d/(n m tau)", _A("not-audited", reason=_NA + "; inherits D.8's rate",
          route="case (4) holds for every pair, against a rate of 1.06 s when the measured one is about 0.5 s "
          "(sec-multimodal-noise)"),
       proof_uses=("Lemma D.1", "Lemma D.2", "Lemma D.8"), section="sec-multimodal-noise"),
    _S("Lemma D.10", "lemma", "at initialisation the in-step neurons' average signal is at least 0.2 sigma0 ||mu||",
       _A("not-audited", reason=_NA + "; the mirror of Lemma C.12"), premises=("4d",)),
    _S("Lemma 5.4", "lemma", "multi-modal stage 1: by T1 the signal reaches Omega(1) while every noise coefficient "
       "stays O~(1/sqrt n)",
       _A("valid", reason="its own step compares the rates 0.48 C_mu (Lemma D.4) and 1.06 (Lemma D.9) through 7b, "
          "7c; it inherits the gaps of Lemmas D.4, D.8",
          route="where 6b, 7b, 7c fail (Figure 1) max rho at T1 is over ten times 1/sqrt(n) (sec-multimodal-t1)"),
       uses=("Lemma 5.3",), proof_uses=("Lemma D.4", "Lemma D.9", "Lemma D.10"), premises=("6b", "7b", "7c"),
       section="sec-multimodal-t1"),
    _S("Lemma D.11", "lemma", "the gradient-norm bound of Lemma C.14 for both encoders",
       _A("not-audited", reason="the proof is omitted ('follows from Lemma C.14')"), proof_uses=("Lemma C.14",),
       section="sec-mm2-telescoping"),
    _S("Lemma D.12", "lemma", "at T1 each encoder is within O~(sqrt(m)/||mu||) of its comparator",
       _A("valid", reason="a triangle inequality; the printed chain sums |gamma_r| over r (giving m) where the "
          "Frobenius norm gives sqrt(m), the stated order", route="distances are 1.6-2.5 times sqrt(m)/||mu|| "
          "(sec-mm2-comparators)"),
       proof_uses=("Lemma 5.4", "Lemma B.5"), section="sec-mm2-comparators"),
    _S("Lemma D.13", "lemma", "on [T1, T*] each comparator's positive logit exceeds 2 log(2M/eps) and every "
       "negative one stays below log(2M/eps), in both encoders",
       _A("gap-inside", step="I_1 >= 4L: the lower bound keeps only the neurons in step from t = 0",
          reason="theta_r = sign<w_r(0), mu> is read at t = 0; on a neuron the other modality won, sign<w_r(T1), mu> "
          "= -theta_r and its term theta_r y_i relu'(.) relu(.) is negative, not >= 0, so I_1 needs (1/m)(sum over "
          "in-step A_r minus sum over those neurons) >= 2: about half the neurons start out of step, at any n",
          route="with the signs read at T1 the margins are closer but still below 2L in the runs (sec-mm2-margins)"),
       proof_uses=("Lemma 5.4", "Lemma B.5"), section="sec-mm2-margins"),  # C.16's argument, not its conclusion
    _S("Lemma D.14", "lemma", "each step brings both encoders closer to their comparators by eta times the loss, "
       "minus 2 eta eps",
       _A("gap-inside", step="the comparators with theta_r, theta~_r read at t = 0 (Lemma D.13)",
          reason="its descent inequality rests on D.13's margins, which fail for the neurons the other modality "
          "won (sign at T1 = -theta_r) whatever n is",
          route="the second network's inequality fails at every step even with the signs at T1 in the runs "
          "(sec-mm2-telescoping)"),
       proof_uses=("Lemma D.13", "Lemma D.11", "Lemma C.14"),  # C.17's argument, not its conclusion
       section="sec-mm2-telescoping"),
    _S("Lemma D.15", "lemma", "telescoping: some iterate after T1 has loss below 3 eps, and the noise coefficients "
       "stay below sigma0 sigma_xi sqrt(d)", _A("not-audited", reason="the telescoping from Lemma D.14 is "
          "immediate; the bound on rho was not read line by line",
          route="the noise bound fails at every step where Lemma 5.4's noise half fails (sec-mm2-telescoping)"),
       proof_uses=("Lemma D.14", "Lemma D.12", "Lemma 5.4"), section="sec-mm2-telescoping"),
    _S("Appendix D.3", "step", "multi-modal downstream: the signal response Omega~(1/sqrt d) beats the noise "
       "response O~(1/sqrt(dn)), so the OOD error is o(1)",
       _A("gap-inside", step="from rho = O~(1/sqrt n) and gamma = Omega(1) to an o(1) error",
          reason="the memorised part sum_i rho_i <xi_i, zeta>/||xi_i||^2 has sd ~ sqrt(n) (1/sqrt n)(1/sqrt d) = "
          "Theta~(1/sqrt d), not O~(1/sqrt(dn)), the size of the signal part gamma <nu, mu>/||mu||^2 = O(1/sqrt d) "
          "under Sec. 3.3; and the init part sigma0 sigma_xi sqrt(d) may be O~(1) under 4.1(3)",
          route="none found: under Sec. 3.3 (cos 0.05) the multi-modal error is about 0.46 (sec-downstream-verdicts)"),
       uses=("Sec. 3.3",), proof_uses=("Lemma 5.4", "Lemma D.15"), premises=("3.3",),
       section="sec-downstream-statements"),
    _S("Theorem 4.3 (1)", "theorem", "multi-modal contrastive learning reaches training loss eps",
       _A("valid", reason="composes Lemma 5.4 and Lemma D.15; inherits their gaps"),
       uses=("Eq. (9)",), proof_uses=("Lemma 5.4", "Lemma D.15"), section="sec-multimodal-stage2"),
    _S("Theorem 4.3 (2)", "theorem", "multi-modal contrastive learning reaches an o(1) OOD test error",
       _A("valid", reason="Appendix D.3 applied at T*; inherits its gap",
          route="every arm that meets Sec. 3.3 gives an error near 0.46; the 'holds' rows are at nu parallel to mu "
          "(sec-downstream-verdicts)"),
       uses=("Sec. 3.3",), proof_uses=("Appendix D.3",), section="sec-downstream-statements"),
)


def statement(key: str) -> Statement:
    """The statement named ``key`` exactly; a ValueError listing the keys otherwise."""
    for s in STATEMENTS:
        if s.key == key:
            return s
    raise ValueError(f"key={key!r} is not a statement of the blueprint; valid: {', '.join(s.key for s in STATEMENTS)}")


_PART = re.compile(r"^(.*?) \(([0-9a-z]+)\)$")


def resolve(paper: str) -> Tuple[Statement, ...]:
    """The statements a register row's ``paper=`` names: the statement of that key; for a part
    (``"Lemma D.3 (3)"``, ``"Assumption 4.1 (6b)"``) without a node of its own, the whole statement
    (``"Lemma D.3"``, ``"Assumption 4.1 (6)"``); for a statement made of parts (``"Theorem 4.3"``),
    all of its parts; ``()`` where the blueprint has no such statement (an equation, ``"Sec. 6"``,
    ``"Figure 1"``: nothing with premises)."""
    keys = {s.key: s for s in STATEMENTS}
    paper = paper.strip()
    if paper in keys:
        return (keys[paper],)
    m = _PART.match(paper)
    if m:
        base, part = m.group(1), m.group(2)
        alt = f"{base} ({part[0]})" if len(part) > 1 and part[0].isdigit() else None
        if alt in keys:
            return (keys[alt],)
        if base in keys:
            return (keys[base],)
    parts = tuple(s for s in STATEMENTS if s.key.startswith(paper + " ("))
    return parts


def premise_keys(key: str, *, transitive: bool = True) -> Tuple[str, ...]:
    """The premise keys of statement ``key``'s proof; ``transitive``: with those of every statement
    its statement or proof uses, recursively (what must hold for the conclusion to be guaranteed)."""
    seen, order, todo = set(), [], [key]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        s = statement(k)
        for p in s.premises:
            if p not in order:
                order.append(p)
        if transitive:
            todo.extend(s.uses + s.proof_uses)
    return tuple(p for p in _condition_keys() if p in order)


Setting = Union[SyntheticConfig, Sequence[SyntheticConfig]]


def _settings(setting: Setting) -> List[SyntheticConfig]:
    cfgs = [setting] if isinstance(setting, SyntheticConfig) else list(setting)
    if not cfgs:
        raise ValueError("setting is empty: give the SyntheticConfig (or configs) the check measured")
    for c in cfgs:
        check_config(c, "setting")
    return cfgs


def _evaluate(cfg: SyntheticConfig, acfg: AssumptionConfig) -> Dict[str, Condition]:
    return {c.key: c for c in check_assumption41(cfg, acfg) + premise_conditions(cfg, acfg)}


def failing_premises(paper: str, setting: Setting, acfg: AssumptionConfig = AssumptionConfig()) -> Tuple[str, ...]:
    """The premise keys of the statement(s) ``paper`` names (:func:`resolve`, transitively) that fail
    at one or more of the configurations ``setting``."""
    keys = []
    for s in resolve(paper):
        if s.kind not in ("assumption", "definition"):
            keys += [k for k in premise_keys(s.key) if k not in keys]
    if not keys:
        return ()
    bad = []
    for cfg in _settings(setting):
        ev = _evaluate(cfg, acfg)
        bad += [k for k in keys if not ev[k].holds and k not in bad]
    return tuple(k for k in _condition_keys() if k in bad)


def verdict(held: Optional[bool], paper: str, setting: Optional[Setting] = None,
            acfg: AssumptionConfig = AssumptionConfig()) -> Tuple[str, Tuple[str, ...]]:
    """A row's verdict from what the check observed and where: ``held`` is ``True`` (the conclusion
    of ``paper`` was borne out), ``False`` (it was not) or ``None`` (a measurement of ours).  Returns
    ``(verdict, failing premise keys)``: ``"holds"``/``"fails"`` where every premise of the statement
    holds at every configuration of ``setting``; ``"reach-holds"``/``"reach-fails"`` where the only
    premises that fail are out of any computation's reach (:data:`UNREACHABLE`); ``"beyond"``/
    ``"outside"`` where another fails.  A statement with premises needs ``setting`` (ValueError
    otherwise)."""
    if held is None:
        return "observation", ()
    if not isinstance(held, bool):
        raise ValueError(f"held={held!r} must be True, False or None")
    # a premise or a definition concludes nothing from premises: a check of it (the paper's 2.66 is
    # what its proof's constants give) is judged as it stands
    stmts = [s for s in resolve(paper) if s.kind not in ("assumption", "definition")]
    needs = [k for s in stmts for k in premise_keys(s.key)]
    if not needs:
        return ("holds" if held else "fails"), ()
    if setting is None:
        raise ValueError(f"paper={paper!r}: the statement's proof uses the premises {', '.join(dict.fromkeys(needs))}; "
                         "give the setting the check measured (setting=cfg, or claims.setting(cfg))")
    bad = failing_premises(paper, setting, acfg)
    if not bad:
        return ("holds" if held else "fails"), bad
    if all(k in UNREACHABLE for k in bad):
        return ("reach-holds" if held else "reach-fails"), bad
    return ("beyond" if held else "outside"), bad


def edges() -> List[Tuple[str, str, str]]:
    """``(source, target, kind)`` for every edge: ``kind`` ``"uses"`` (the target's statement uses the
    source) or ``"proof"`` (only its proof does)."""
    out = []
    for s in STATEMENTS:
        out += [(u, s.key, "uses") for u in s.uses]
        out += [(u, s.key, "proof") for u in s.proof_uses if u not in s.uses]
    return out


def premise_edges() -> List[Tuple[str, str, Tuple[str, ...]]]:
    """``(premise node, statement, condition keys)``: an edge from the premise node that states a condition
    (an item of Assumption 4.1, ``"Sec. 3.3"``) to every statement whose *own* proof uses one of its
    condition keys, with those keys.  Kept apart from :func:`edges`: a statement inherits only the keys its
    proof uses, not the whole item (``premise_keys`` never follows these edges)."""
    owner = {}
    for s in STATEMENTS:
        if s.kind == "assumption":
            for k in s.premises:
                owner.setdefault(k, s.key)
    out = []
    for s in STATEMENTS:
        if s.kind == "assumption":
            continue
        by: Dict[str, List[str]] = {}
        for k in s.premises:
            if k in owner:
                by.setdefault(owner[k], []).append(k)
        out += [(o, s.key, tuple(ks)) for o, ks in by.items()]
    return out


def rests_on(key: str, status: str = "gap-inside") -> Tuple[str, ...]:
    """The statements with audit ``status`` that statement ``key``'s statement or proof uses, directly or
    through other statements (``key`` itself excluded): what a proof audited "valid" inherits."""
    if status not in AUDITS:
        raise ValueError(f"status={status!r} is not one of {AUDITS}")
    statement(key)
    seen, todo = set(), [key]
    while todo:
        k = todo.pop()
        for u in statement(k).uses + statement(k).proof_uses:
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return tuple(s.key for s in STATEMENTS if s.key in seen and s.audit.status == status)


def gaps(status: str = "gap-inside") -> List[Statement]:
    """The statements whose proof audit is ``status``."""
    if status not in AUDITS:
        raise ValueError(f"status={status!r} is not one of {AUDITS}")
    return [s for s in STATEMENTS if s.audit.status == status]


def check_blueprint(statements: Iterable[Statement] = None) -> None:
    """Raise ValueError unless every key is unique, every edge names a statement and the graph has
    no cycle."""
    sts = list(STATEMENTS if statements is None else statements)
    keys = [s.key for s in sts]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"duplicate statement keys: {dup}")
    known = set(keys)
    for s in sts:
        for u in s.uses + s.proof_uses:
            if u not in known:
                raise ValueError(f"{s.key!r} uses {u!r}, which is not a statement of the blueprint")
    state: Dict[str, int] = {}
    by = {s.key: s for s in sts}

    def visit(k, path):
        if state.get(k) == 2:
            return
        if state.get(k) == 1:
            raise ValueError(f"the blueprint has a cycle: {' -> '.join(path + [k])}")
        state[k] = 1
        for u in by[k].uses + by[k].proof_uses:
            visit(u, path + [k])
        state[k] = 2

    for k in keys:
        visit(k, [])


def layout(statements: Sequence[Statement] = None, sweeps: int = 8) -> Dict[str, Tuple[int, float]]:
    """Layered coordinates of the graph for drawing, ``{key: (layer, position)}``: a statement's
    layer is one more than the deepest statement it uses (premises at layer 0, the theorems last),
    and the order within a layer comes from ``sweeps`` passes of the barycentre heuristic (each node
    moved to the mean position of its neighbours in the previous, then the next layer), which
    keeps edges short and crossings few.  Positions are ranks ``0, 1, ...`` within a layer.
    Deterministic: ties keep the order of ``STATEMENTS``."""
    sts = list(STATEMENTS if statements is None else statements)
    check_blueprint(sts)
    by = {s.key: s for s in sts}
    deps = {s.key: [u for u in s.uses + s.proof_uses if u in by] for s in sts}
    layer: Dict[str, int] = {}

    def depth(k):
        if k not in layer:
            layer[k] = 1 + max((depth(u) for u in deps[k]), default=-1)
        return layer[k]

    for s in sts:
        depth(s.key)
    n_layers = 1 + max(layer.values(), default=0)
    rows = [[s.key for s in sts if layer[s.key] == j] for j in range(n_layers)]
    users = {s.key: [] for s in sts}
    for k, ds in deps.items():
        for u in ds:
            users[u].append(k)
    index = {k: float(i) for row in rows for i, k in enumerate(row)}
    for sweep in range(sweeps):
        down = sweep % 2 == 0
        order = range(1, n_layers) if down else range(n_layers - 2, -1, -1)
        for j in order:
            def bary(k):
                nb = deps[k] if down else users[k]
                return sum(index[x] for x in nb) / len(nb) if nb else index[k]
            rows[j] = sorted(rows[j], key=lambda k: (bary(k), index[k]))
            for i, k in enumerate(rows[j]):
                index[k] = float(i)
    return {k: (layer[k], index[k]) for k in layer}


#: How the rows of one statement combine into its measured verdict (the first that occurs wins).
_MEASURED_ORDER = ("fails", "reach-fails", "holds", "reach-holds", "beyond", "outside")


def measured_verdict(verdicts: Iterable[str]) -> str:
    """One statement's measured verdict from its register rows' verdicts: ``"fails"`` if any row
    refutes it where its premises hold, else ``"holds"`` if one bears it out there, else ``"beyond"``
    (borne out only where a premise fails), ``"outside"`` (not borne out, a premise failing), or
    ``""`` (no row judges it: observations only, or no rows)."""
    vs = set(verdicts)
    unknown = vs - set(VERDICTS)
    if unknown:
        raise ValueError(f"verdicts {sorted(unknown)} are not among {VERDICTS}")
    for v in _MEASURED_ORDER:
        if v in vs:
            return v
    return ""


def short_label(key: str) -> str:
    """The node's text: ``"Lemma C.10"`` -> ``"C.10"``, ``"Theorem 4.3 (2)"`` -> ``"Thm 4.3 (2)"``,
    ``"Assumption 4.1 (6)"`` -> ``"A4.1 (6)"``, ``"Appendix D.3"`` -> ``"App. D.3"``."""
    for long, short in (("Lemma ", ""), ("Proposition ", "Prop. "), ("Theorem ", "Thm "),
                        ("Assumption ", "A"), ("Appendix ", "App. "), ("Corollary ", "Cor. ")):
        if key.startswith(long):
            return short + key[len(long):]
    return key
