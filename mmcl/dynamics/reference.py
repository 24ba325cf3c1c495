"""One step of the paper's update, written the way the paper writes it: the reference step.

:func:`reference_step` is Eq. (7) (single-modal) and Eq. (10) (multi-modal) in the coordinates of
Eq. (11), i.e. the brackets of Lemma 5.1 (Eqs. 12-13) and Lemma 5.3: the weights are formed from
the coefficients, the similarities of Eqs. (4)/(8) are summed over neurons and patches, the
negatives are gathered from ``N_i``, the loss derivatives ``l'_i``, ``l'_{i,j}`` are the softmax
weights of the positive and of the negatives (Eq. 8), and each term of the update is one line.
One draw, no batch, no buffers; it computes in the dtype of the data (the tests use float64).

It is slow on purpose (it forms ``W``, ``O(m n d)``).  The engines take the same step through the
tuned kernel of :mod:`mmcl.dynamics.kernel`; the tests check that the two agree on random states in
both modes, and that iterating this step reproduces the recursion engine's trajectory.
:func:`update_terms` (the parts of one step, batched) is built on this function.
"""
from __future__ import annotations

import dataclasses

import torch

from mmcl.model.config import SyntheticConfig
from mmcl.model.data import SyntheticData
from mmcl.model.losses import relu
from mmcl.dynamics.trajectory import UpdateTerms, check_mode
from mmcl.dynamics.forward import weights

__all__ = ["reference_step", "update_terms", "contrast_terms", "coefficient_update"]


def _check_args(who: str, mode: str, data: SyntheticData, gamma_tilde, rho_tilde) -> None:
    check_mode(mode)
    if mode == "multi" and (gamma_tilde is None or rho_tilde is None or not data.has_tilde):
        raise ValueError(f"{who}: mode='multi' needs gamma_tilde, rho_tilde and the second modality")


def contrast_terms(anchor_sig, anchor_noise, pos_sig, pos_noise, cand_sig, cand_noise, negatives, m: int, tau: float):
    """InfoNCE of one direction (Eq. 6, or one half of Eq. 9), from activations ``(m, n)``: of the
    anchors' signal and noise patches, of the positives' patches (``x_i^+``, or the other
    modality's ``x~_i``) and of the candidates whose columns ``j in N_i`` are anchor ``i``'s
    negatives (``x_j``, or ``x~_j``).  Returns the per-anchor loss ``(n,)``, ``l'_i (n,)`` and
    ``l'_{i,j} (n, M)`` in the order of ``negatives``."""
    # Sim(x_i, x_i^+) = 1/m sum_r sum_p sigma(<w_r, x_i^(p)>) sg(sigma(<w'_r, x_i^+(p)>)), p = signal, noise
    sim_pos = (anchor_sig * pos_sig + anchor_noise * pos_noise).sum(0) / m  # (n,)
    # Sim(x_i, x_j) for j in N_i: the negatives' activations gathered from N_i, (m, n, M)
    sim_neg = (anchor_sig[:, :, None] * cand_sig[:, negatives]
               + anchor_noise[:, :, None] * cand_noise[:, negatives]).sum(0) / m  # (n, M)
    logits = torch.cat([sim_pos[:, None], sim_neg], 1) / tau  # (n, 1 + M): [positive, negatives]
    log_softmax = torch.log_softmax(logits, 1)
    probs = log_softmax.exp()  # Eq. (8): l'_i (column 0) and l'_{i,j} (the rest)
    return -log_softmax[:, 0], probs[:, 0], probs[:, 1:]


def coefficient_update(y, a, b_pos, b_neg, noise_active, noise_pos, noise_neg, lp, lp_neg, mu_sq, xi_sq, step):
    """The brackets of Eqs. (12)-(13) for one network: ``a (m,)`` its signal preactivation
    ``<w_r, mu>``; ``b_pos (m, n)``/``b_neg (m, n, M)`` the signal activations of the positives and
    of the negatives that enter the bracket; ``noise_active (m, n)`` is ``sigma'(<w_r, xi_i>)``,
    ``noise_pos (m, n)``/``noise_neg (m, n, M)`` the noise activations of positives and negatives.
    Returns ``(dgamma_pos, dgamma_neg, drho)`` with ``dgamma = dgamma_pos - dgamma_neg``."""
    slope = (y[None, :] * a[:, None] > 0).to(a.dtype)  # sigma'(<w_r, y_i mu>), (m, n)
    # Eq. (12): eta/(n m tau) sum_i [(1 - l'_i) sigma(.. x_i^+ ..) - sum_{j in N_i} l'_{i,j} sigma(.. x_j ..)] sigma'(<w_r, y_i mu>) y_i ||mu||^2
    dgamma_pos = step * ((1 - lp)[None, :] * b_pos * slope * y[None, :]).sum(1) * mu_sq
    dgamma_neg = step * ((lp_neg[None] * b_neg).sum(2) * slope * y[None, :]).sum(1) * mu_sq
    # Eq. (13): eta/(n m tau) [(1 - l'_i) sigma(.. positive's noise ..) - sum_{j in N_i} l'_{i,j} sigma(.. xi_j ..)] sigma'(<w_r, xi_i>) ||xi_i||^2
    drho = step * ((1 - lp)[None, :] * noise_pos - (lp_neg[None] * noise_neg).sum(2)) * noise_active * xi_sq[None, :]
    return dgamma_pos, dgamma_neg, drho


def reference_step(data: SyntheticData, cfg: SyntheticConfig, mode: str, gamma: torch.Tensor, rho: torch.Tensor,
                   gamma_tilde: torch.Tensor = None, rho_tilde: torch.Tensor = None) -> UpdateTerms:
    """One step of Lemma 5.1 (``mode="single"``) or Lemma 5.3 (``"multi"``) at the coefficients
    ``gamma (m,)``, ``rho (m, n)`` (and ``gamma_tilde``, ``rho_tilde`` of the second network), for one
    (unbatched) draw.  Returns the loss at that state and the parts of the update (Eqs. 12-13):
    ``gamma(t+1) = gamma + dgamma_pos - dgamma_neg``, ``rho(t+1) = rho + drho``."""
    if data.batched:
        raise ValueError("reference_step takes one draw; for a batch use update_terms")
    _check_args("reference_step", mode, data, gamma_tilde, rho_tilde)
    for name in ("n", "d", "m", "M"):
        if getattr(cfg, name) != getattr(data, name):
            raise ValueError(f"SyntheticConfig.{name}={getattr(cfg, name)} does not match the data "
                             f"({name}={getattr(data, name)})")
    y, N, m, n = data.y, data.negatives, data.m, data.n
    step = cfg.lr / (n * m * cfg.tau)  # eta / (n m tau) of Eqs. (7), (10)
    W = weights(data, gamma, rho)  # Eq. (11): w_r = w_r(0) + gamma_r mu/||mu||^2 + sum_i rho_ri xi_i/||xi_i||^2
    a = W @ data.mu  # <w_r, mu>, (m,)
    sig = relu(a[:, None] * y[None, :])  # sigma(<w_r, y_i mu>), (m, n): the signal patch of x_i (and of x_i^+)
    noise_pre = W @ data.xi.T  # <w_r, xi_i>, (m, n)
    noise = relu(noise_pre)
    active = (noise_pre > 0).to(a.dtype)  # sigma'(<w_r, xi_i>)
    mu_sq, xi_sq = data.mu @ data.mu, (data.xi * data.xi).sum(1)
    if mode == "single":
        noise_plus = relu(W @ (data.xi + data.eps).T)  # sigma(<w_r, xi_i + eps_i>): the positive's noise patch (Eq. 5)
        loss, lp, lp_neg = contrast_terms(sig, noise, sig, noise_plus, sig, noise, N, m, cfg.tau)
        gp, gn, dr = coefficient_update(y, a, sig, sig[:, N], active, noise_plus, noise[:, N], lp, lp_neg, mu_sq, xi_sq, step)
        return UpdateTerms(loss=loss.mean(), lprime=lp, lprime_neg=lp_neg, dgamma_pos=gp, dgamma_neg=gn, drho=dr)
    # multi-modal: each network is trained against the other's activations (Eq. 10)
    Wt = weights(data, gamma_tilde, rho_tilde, tilde=True)
    at = Wt @ data.mu_tilde  # <w~_r, mu~>
    sig_t = relu(at[:, None] * y[None, :])  # sigma(<w~_r, y_i mu~>)
    noise_pre_t = Wt @ data.xi_tilde.T
    noise_t, active_t = relu(noise_pre_t), (noise_pre_t > 0).to(a.dtype)
    mu_sq_t, xi_sq_t = data.mu_tilde @ data.mu_tilde, (data.xi_tilde * data.xi_tilde).sum(1)
    # h's anchors x_i: positive x~_i, negatives x~_j (j in N_i); g's anchors x~_i: positive x_i, negatives x_j
    loss_h, lp, lp_neg = contrast_terms(sig, noise, sig_t, noise_t, sig_t, noise_t, N, m, cfg.tau)
    loss_g, lpt, lpt_neg = contrast_terms(sig_t, noise_t, sig, noise, sig, noise, N, m, cfg.tau)
    gp, gn, dr = coefficient_update(y, a, sig_t, sig_t[:, N], active, noise_t, noise_t[:, N], lp, lp_neg, mu_sq, xi_sq, step)
    gpt, gnt, drt = coefficient_update(y, at, sig, sig[:, N], active_t, noise, noise[:, N], lpt, lpt_neg, mu_sq_t, xi_sq_t,
                            step)
    return UpdateTerms(loss=(loss_h + loss_g).mean(), lprime=lp, lprime_neg=lp_neg, dgamma_pos=gp, dgamma_neg=gn,
                       drho=dr, lprime_tilde=lpt, lprime_tilde_neg=lpt_neg, dgamma_pos_tilde=gpt,
                       dgamma_neg_tilde=gnt, drho_tilde=drt)


def update_terms(data: SyntheticData, cfg: SyntheticConfig, mode: str, gamma, rho,
                 gamma_tilde=None, rho_tilde=None) -> UpdateTerms:
    """The terms of one step of Lemma 5.1 (single) or Lemma 5.3 (multi) at the state given by the
    coefficients: :func:`reference_step` for one draw, or for each draw of a batch (a leading ``B``
    on the data and the coefficients, results stacked).  The engines take the same step through the
    fast kernel (positive minus negative term, in one piece); this exposes its parts (e.g. the
    negative term of Eq. (12)) for inspection."""
    _check_args("update_terms", mode, data, gamma_tilde, rho_tilde)
    if not data.batched:
        return reference_step(data, cfg, mode, gamma, rho, gamma_tilde, rho_tilde)
    B = data.y.shape[0]
    cfgs = [cfg] * B if isinstance(cfg, SyntheticConfig) else list(cfg)
    if len(cfgs) != B:
        raise ValueError(f"cfg: got {len(cfgs)} configs for a batch of {B} draws")
    tilde = mode == "multi"
    terms = [reference_step(data[b], cfgs[b], mode, gamma[b], rho[b],
                            gamma_tilde[b] if tilde else None, rho_tilde[b] if tilde else None) for b in range(B)]
    return UpdateTerms(**{f.name: (None if getattr(terms[0], f.name) is None
                                   else torch.stack([getattr(t, f.name) for t in terms]))
                          for f in dataclasses.fields(UpdateTerms)})
