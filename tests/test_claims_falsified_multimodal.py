"""The chapter sec-multimodal's claims about the synchronisation time, made false, fail through the claims register
(issue 15: a check must be able to fail).  The tests run the chapter's computation at its settings
(the Figure 1 configuration, two seeds instead of five) and state the chapter's claim once as the
chapter does (the control, which passes) and once with a deliberately wrong formula."""
import pytest
import torch

import mmcl
from mmcl.booksupport.claims import ClaimFailed, Claims
from mmcl.proofs import multi_stage1 as sync

from mmcl.model.config import SyntheticConfig as _Config

FIG1 = _Config()  # the setting the chapters' checks measure (Figure 1), where the register judges premises

f64 = torch.float64


@pytest.fixture(scope="module")
def synchronised():
    cfg = mmcl.SyntheticConfig()
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=f64) for s in range(2)])
    multi = mmcl.simulate(cfg, data, "multi", "recursion")
    return cfg, sync.synchronisation(data, multi)


def _within_two_steps(syn, predicted_step):
    synced = syn.opposite0 & syn.synchronised
    err = (syn.sync_step - predicted_step)[synced]
    return (err.abs() <= 2).double().mean()


def test_the_sync_time_check_fails_when_kappa_forgets_the_second_modality(synchronised):
    """The chapter sec-multimodal: the proposition gets t' right to within two steps for most out-of-step neurons.
    With kappa computed from ||mu||^2 instead of ||mu|| ||mu~|| (C_mu = 3 dropped), the predicted
    t' is about three times too long and the same check fails."""
    cfg, syn = synchronised
    claim = dict(claim="... and gets t' right to within two steps for most of them", paper="Lemma D.3 (3)",
                 verdict="observation", bound=0.5)
    Claims(display=False).setting(FIG1).lower(observed=_within_two_steps(syn, syn.predicted_step), **claim)  # the chapter's check
    u0, v0 = syn.u[..., 0, :], syn.v[..., 0, :]
    kappa_wrong = cfg.lr * cfg.M * cfg.mu_norm ** 2 / (2 * cfg.m * cfg.tau * (cfg.M + 1))
    wrong = sync.predicted_sync_step(u0, v0, kappa_wrong)
    with pytest.raises(ClaimFailed, match=r"Lemma D\.3 \(3\)"):
        Claims(display=False).setting(FIG1).lower(observed=_within_two_steps(syn, wrong), **claim)


def test_the_winning_side_check_fails_when_the_first_modality_always_wins(synchronised):
    """The chapter sec-multimodal: the proposition names the winning side, sign(u(0) + v(0)), for at least 80 % of the
    out-of-step neurons.  Predicting that the first network's sign always wins, sign(u(0) - v(0)),
    fails the same check."""
    cfg, syn = synchronised
    opp = syn.opposite0
    claim = dict(claim="our proposition names the winning side for the large majority of out-of-step neurons "
                       "(>= 80 %)", paper="Lemma D.3 (3)", verdict="observation", bound=0.8)
    Claims(display=False).setting(FIG1).lower(observed=(syn.sign == syn.predicted_sign)[opp].double().mean(), **claim)
    wrong = torch.sign(syn.u[..., 0, :] - syn.v[..., 0, :])
    with pytest.raises(ClaimFailed, match=r"Lemma D\.3 \(3\)"):
        Claims(display=False).setting(FIG1).lower(observed=(syn.sign == wrong)[opp].double().mean(), **claim)
