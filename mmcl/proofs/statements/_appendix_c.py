"""The statements of Appendix C: single-modal learning, stage 1 (Lemmas 5.1, 5.2, C.1-C.12), stage 2
(Proposition C.13, Lemmas C.14-C.18), the downstream step C.3 and Theorem 4.2.
"""
from __future__ import annotations

from typing import Tuple

from mmcl.proofs.statements.schema import Audit as _A, Statement as _S

#: Appendix C, in the paper's order.
APPENDIX_C: Tuple[_S, ...] = (
    # ---- Appendix C: single-modal ---------------------------------------------------------------
    _S("Lemma 5.1", "lemma", "the signal and noise coefficients of Eq. (11) follow explicit one-step recursions "
       "under gradient descent on Eq. (6)",
       _A("valid", reason="project the gradient step onto mu and each xi_i; the recursion equals gradient "
          "descent to float64 roundoff (sec-stage1-recursion's check cell)"), uses=("Eq. (11)", "Eq. (6)"), section="sec-stage1-recursion"),
    _S("Lemma C.1", "lemma", "while the coefficients are O(1), each neuron's overlap with xi_i (mu) equals its "
       "noise (signal) coefficient up to O(sqrt(log/d) n)",
       _A("valid", step="(c): the cross terms sum_i' rho_i' <xi_i', xi_i>/||xi_i'||^2 bounded with Lemma B.5",
          reason="each cross term is at most sqrt(log(6n^2/delta)/d) by B.5's near-orthogonality, n of them give the "
          "stated O(sqrt(log/d) n); step (c) needs n (n SNR^2) >= 2, which n SNR^2 = Theta(1) gives (sympy); the "
          "printed constants 5 and sqrt(8) take |gamma|, |rho| <= 1, and the sum should skip i' = i (typos)"),
       proof_uses=("Lemma B.5",), section="sec-stage1-sign-sets"),
    _S("Lemma C.2", "lemma", "while the coefficients are O(1), every loss derivative lies within a constant factor "
       "C_l of 1/(M+1)",
       _A("valid", reason="bounded coefficients bound every similarity, hence every softmax weight within a "
          "constant factor; the lemma names no constant"),
       proof_uses=("Lemma C.1", "Lemma B.4", "Lemma B.5"), premises=("1a", "3a", "3c", "5a", "5b"),
       section="sec-stage1-growth"),
    _S("Lemma C.3", "lemma", "every neuron keeps the sign of its signal overlap, and its signal coefficient grows "
       "monotonically in that direction",
       _A("valid", step="the induction <w_r(t+1), mu> >= 0.99 <w_r(0), mu> + gamma_r(t+1) (Lemma C.1 with Lemma B.2's margin)",
          reason="Lemma C.1's error is R/100 of B.2's margin, R = max |rho_r,i| (sympy), so the sign survives while "
          "R < 100; the proof claims 'for all t' without bounding R, which Proposition C.13's log(3 M T*) (about 18 at "
          "the decisive setting) does, though C.3 does not cite it; a sign misprint in the U_- update",
          route="where 1b holds no neuron changes sign (max rho 5-6 by T1); at Figure 1, where 1a and 1b fail, 1 to "
          "10 of m = 50 neurons per seed leave their signal set (sec-stage1-sign-sets)"),
       proof_uses=("Lemma C.1", "Lemma B.2"), premises=("1b",), section="sec-stage1-sign-sets"),
    _S("Lemma C.4", "lemma", "the single-modal signal grows at most geometrically at rate 0.52 eta ||mu||^2/(m tau)",
       _A("valid", step="(c): 1.01 (1/2 + sqrt(1/5000)) <= 0.52 with n >= 2500 log(4/delta) (4a)",
          reason="1.01 (0.5 + 0.01414) = 0.5193 <= 0.52 (sympy); the margin is thin (it holds while max|rho| <= 1.14 "
          "through Lemma C.1's error) and the printed statement drops the exponent t that its proof and its use in "
          "Lemma 5.2 carry",
          route="at Lemma B.2's dimension the bound holds at every step; at Figure 1 (1b failing) it is exceeded up "
          "to 4x"),
       proof_uses=("Lemma C.2", "Lemma C.3", "Lemma C.1", "Lemma B.2", "Lemma B.3"), premises=("4a",)),
    _S("Lemma C.5", "lemma", "each neuron's overlap with the augmentation noise is a large constant factor below "
       "its initial overlap with xi_i",
       _A("gap-inside", step="'<= (1/C)|<w_r(0), xi_i>|' by anti-concentration, with d >= 2c^2/(-log(1 - delta^2/4n^2) "
          "pi sigma0^2 sigma_xi^2) and c = C(2 sqrt(log(8mn/delta)) sigma0 sigma_eps sqrt(d) + ...)",
          reason="the first term of c grows like sqrt(d), as the spread sigma0 sigma_xi sqrt(d) of <w_r(0), xi_i> does, "
          "so d cancels from the condition (sympy): what remains is sigma_eps/sigma_xi <~ delta/(C n), which item 5's "
          "sigma_eps <= sigma_xi/polylog does not give; at t = 0 a pair violates the claim with probability "
          "(2/pi) arctan(C sigma_eps/sigma_xi) whatever d (a Cauchy ratio): 97 % at Lemma C.11's C_xi = 200",
          route="Lemma C.11 needs only an average of it over the samples, which holds up to a factor 1 - "
          "O(sigma_eps/sigma_xi) (sec-proof-audit)"),
       proof_uses=("Lemma C.1", "Lemma B.5", "Lemma B.1"), premises=("1c",), section="sec-proof-audit"),
    _S("Lemma C.6", "lemma", "every initial overlap |<w_r(0), xi_i>| exceeds 150 sqrt(log(6n^2/delta)/d) once d "
       "is large (its own condition on d)",
       _A("gap-inside", step="'when d >= sqrt(300 log(6n^2/delta)/(-log(1 - delta^2/4n^2) pi sigma0^2 sigma_xi^2)), "
          "P(|<w_r(0), xi_i>| <= c) <= delta/n', then a union bound",
          reason="with Lemma B.1 the printed 300 corresponds to the margin sqrt(150 L/d), not the stated 150 sqrt(L/d), "
          "which needs 45,000 (sympy); at the printed threshold a pair falls below the margin with probability 6.1 "
          "delta/n, not delta/n, and the union bound runs over n pairs where the conclusion covers m n",
          route="the lemma's conclusion holds with d >= sqrt(45000 L/(-log(1 - (delta/mn)^2) pi sigma0^2 sigma_xi^2)), "
          "which the decisive scaling meets at n = 9,224; what Lemma C.7 takes from it (a margin of 5 n sqrt(L/d)) "
          "needs d of about 2e26 there"),
       proof_uses=("Lemma B.1",), premises=("C.6",), section="sec-regime-verdicts"),
    _S("Lemma C.7", "lemma", "samples a neuron starts inactive on stay inactive and are never memorised",
       _A("gap-inside", step="the conclusion I_r,-(t) = I_r,-(0): the induction shows only that initially inactive "
          "samples stay inactive",
          reason="the other inclusion, that active samples stay active, is never argued and fails: at the first step a "
          "pair with 0 < <w_r(0), xi_i> below the negatives' pull (1/(M+1)) sum_j relu(<w_r(0), xi_j>) ~ sigma0 sigma_xi "
          "sqrt(d)/sqrt(2 pi) loses memorisation, about 31 % of the active pairs; step (b) also cites Lemma C.6's "
          "margin 150 sqrt(L/d), below Lemma C.1's error 5 n sqrt(L/d) once n > 30",
          route="the inclusion holds at every n measured (no inactive pair turns active, sec-stage1-sign-sets); 35 % "
          "(Figure 1) to 53 % (the regime scaling) of initially active pairs turn inactive (sec-proof-audit)"),
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
       _A("valid", step="the base case of (23): Psi_r,i(0) >= 101 C_l B_r,-(0)/(M+1), taken from Lemma C.10",
          reason="given Lemma C.10 the induction's steps check; the base case is C.10's conclusion, which fails at "
          "every n (C.10's own gap: with M ~ n/2 it asks every overlap to exceed 40 standard deviations), so this "
          "proof rests on that gap rather than making one of its own; b/a = 1/2 is a ratio of derivatives and "
          "active negatives, the same at every M",
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
       _A("gap-inside", step="(27): the average over neurons (1/m) sum_r of the margins bounded below by one neuron's "
          "term, and rho_r,j <= rho_r,i/2 'by induction'",
          reason="dropping the 1/m makes the step need alpha >= 20 m tau (100 at m = 50, tau = 0.1) where the proof "
          "takes alpha >= 20 tau, against alpha = log(3 M T*) of about 18 at the decisive setting; other neurons' terms "
          "can be negative, and rho_r,j <= rho_r,i/2 does not follow (it fails on about 5 % of pairs in the runs); the "
          "bound on |gamma| and the lower bound on rho are not argued",
          route="the conclusion holds in the runs: max rho about 5 against alpha about 13 at Figure 1 (sec-proof-audit)"),
       proof_uses=("Lemma C.1", "Lemma B.5"), premises=("2a",), section="sec-proof-audit"),
    _S("Lemma C.14", "lemma", "the squared gradient norm is at most max(||mu||^2, sigma_xi^2 d) times the loss",
       _A("gap-inside", step="the unproved '2(1 - l'_i)((1/m) sum_r sum_j z_rj)^2 = O(1)'",
          reason="the inner sum adds the activations of the positive and the M negatives, so the quantity is about "
          "2 M (M + 1) A^2 for an average activation A: Theta(n^2) at t = 0, about 160 at Figure 1's setting, not O(1)",
          route="the conclusion holds by another route (a largest term instead of the sum, with the noise vectors "
          "nearly orthogonal and Proposition C.13's bound); measured ||grad L||^2/L <= 3.5 against an allowed 2,000 "
          "(sec-stage2-comparator)"),
       proof_uses=("Proposition C.13", "Lemma B.5"), section="sec-stage2-comparator"),
    _S("Lemma C.15", "lemma", "at T1 the weights are within O~(sqrt(mn)/(sigma_xi sqrt d)) of the comparator W*",
       _A("valid", reason="a triangle inequality through W(0); a typo writes ||mu|| for 1/||mu|| and the O~ hides "
          "log(1/eps); the book never discusses it"), proof_uses=("Lemma 5.2", "Lemma B.5")),
    _S("Lemma C.16", "lemma", "on [T1, T*] the comparator's positive logit exceeds 2 log(2M/eps) and every "
       "negative one stays below log(2M/eps)",
       _A("gap-inside", step="the negative bound <grad F_j, W*> <= I_3 + I_4 + I_5 <= log(2M/eps)",
          reason="it drops the main term 2L N_ij, N_ij the anchor's neurons' average activation on the negative j: stage "
          "1 grows every active pair whatever its label, so at T1 N_ij is about 10/sqrt(2 pi) = 4 and the negative "
          "logit about 8L, not <= L; and the positive bound '(1/m) sum relu >= 2' is Lemma 5.2's at T1 only, nothing "
          "keeps it after T1; no lambda meets both inequalities",
          route="at Figure 1 the smallest admissible lambda is 12 tau L and the largest 1.5 tau L "
          "(sec-stage2-comparator); the difference <grad F_0 - grad F_j, W*> >= L, which is what the descent needs, "
          "holds in the runs (1.0-1.35 L)"),
       proof_uses=("Lemma B.5", "Lemma 5.2"), section="sec-stage2-comparator"),
    _S("Lemma C.17", "lemma", "each step brings the weights closer to W* by eta times the loss, minus eta eps",
       _A("gap-inside", step="the last inequality: eta C max(||mu||^2, sigma_xi^2 d) L <= ... with Lemma C.14",
          reason="the homogeneity and convexity steps check (L_i(2L, L, ..., L) = log(1 + eps/2), sympy), but the last "
          "step needs eta max(||mu||^2, sigma_xi^2 d) <= O(1), n m times stricter than item 2's eta <= O(n m/(sigma_xi^2 "
          "d)); it also rests on C.16's margins",
          route="measured eta ||grad L||^2/L <= 0.035, so a sharper gradient bound closes the step; with the paper's "
          "lambda the inequality fails at every step because C.16 does (sec-stage2-comparator)"),
       proof_uses=("Lemma C.16", "Lemma C.14"), section="sec-stage2-comparator"),
    _S("Lemma C.18", "lemma", "telescoping: within O~(m n/(sigma_xi^2 d eta eps)) steps after T1 some iterate has "
       "loss below 2 eps, and the signal stays O~(1/sqrt n)",
       _A("gap-inside", step="the bound on gamma after T1: 'O(n SNR^2) beta <= 2 beta <= 3 beta'",
          reason="the telescoping of Lemma C.17 is valid; the signal bound hides lambda^2 = 4 tau^2 L^2 in its O~, so the "
          "factor it treats as n SNR^2 <= 2 is at least 8 tau log^2(2M/eps) n SNR^2, unbounded as M grows or eps -> 0 "
          "under item 6's n SNR^2 = Theta(1): the induction '<= 3 beta' does not close",
          route="gamma grows by a factor 1.1 after T1 in the runs while the proof's increment is 200 times beta: the "
          "conclusion holds there by another route (sec-stage2-scale-gap)"),
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
)
