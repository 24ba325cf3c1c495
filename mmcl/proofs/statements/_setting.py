"""The statements of the setting: the losses and the weights' decomposition (Secs. 3 and 5), Sec. 3.3's
condition on the test signal, Assumption 4.1's items, and the probability tools of Appendix B.
"""
from __future__ import annotations

from typing import Tuple

from mmcl.proofs.statements.schema import Audit as _A, Statement as _S

#: Definitions, premises and Appendix B, in the paper's order.
SETTING: Tuple[_S, ...] = (
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
)
