"""Two of the chapter sec-single-stage1's claims, made false, fail through the claims register (issue 15: a check must be
able to fail).  Each test runs the chapter's computation at its settings (two seeds) and states the
chapter's claim once as the chapter does (the control, which passes) and once made false."""
import pytest
import torch

import mmcl
from mmcl.booksupport.claims import ClaimFailed, Claims
from mmcl.experiments import single_stage1 as experiment
from mmcl.proofs import preactivations
from mmcl.proofs import single_stage1 as dg

from mmcl.model.config import SyntheticConfig as _Config

FIG1 = _Config()  # the setting the chapters' checks measure (Figure 1), where the register judges premises

f64 = torch.float64


@pytest.fixture(scope="module")
def stage1():
    cfg = experiment.config("default")
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=f64) for s in range(2)])
    traj = mmcl.simulate(cfg, data, "single", "recursion", record_derivatives=True)
    hist = preactivations.preactivation_history(traj, data, with_augmented=True)
    bc = dg.b_coefficients(traj, data, cfg, history=hist)
    growth = dg.noise_growth(traj, data, cfg, coefficients=bc, window=(1, 20))
    return cfg, data, traj, hist, bc, growth


def test_the_rate_check_fails_with_the_papers_one_per_cent_negatives(stage1):
    """The chapter sec-single-stage1: the measured rate is (a - b) s with a, b measured (within 25 %).  With Lemma C.11's
    negatives at 1 % of the positive term, b = 0.01 a, the same check fails."""
    cfg, data, traj, hist, bc, growth = stage1
    claim = dict(claim="the measured rate is the B dynamics' (a - b) s (within 25 %)", paper="Lemma C.11",
                 verdict="observation", observed=growth.fit.rate, rtol=0.25)
    Claims(display=False).setting(FIG1).near(target=growth.rate_ab, **claim)  # the chapter's check
    wrong = 0.99 * growth.rate_lemma * torch.ones_like(growth.fit.rate)  # (a - 0.01 a) s with the lemma's a = 0.96
    with pytest.raises(ClaimFailed, match="Lemma C.11"):
        Claims(display=False).setting(FIG1).near(target=wrong, **claim)


def test_the_sign_set_check_fails_when_the_cross_terms_are_put_back(stage1):
    """The chapter sec-single-stage1: without cross terms no neuron leaves U_+ or U_- (Lemma C.3 holds exactly).  On the
    Figure 1 data itself, where the cross terms are present, the same claim fails."""
    cfg, data, traj, hist, bc, growth = stage1
    clean = preactivations.without_cross_terms(data)
    traj_c = mmcl.simulate(cfg, clean, "single", "recursion", record_derivatives=True)
    rep_c = dg.sign_set_report(traj_c, clean, history=preactivations.preactivation_history(traj_c, clean))
    rep = dg.sign_set_report(traj, data, history=hist)
    claim = dict(claim="no neuron leaves U_+ or U_-", paper="Lemma C.3", verdict="holds", value=0)
    Claims(display=False).setting(FIG1).equal(observed=rep_c.flipped.sum(), **claim)
    with pytest.raises(ClaimFailed, match="Lemma C.3"):
        Claims(display=False).setting(FIG1).equal(observed=rep.flipped.sum(), **claim)
