"""The chapter sec-downstream's claims, made false, fail through the claims register (issue 15: a check must be able
to fail).  Each test states one of the chapter's claims as the chapter does, once at the chapter's
setting (the control, which passes) and once where it is false: at a perturbed setting, or with a
deliberately wrong formula.  Two seeds and a few seconds on one thread."""
import math

import pytest

import mmcl
from mmcl.booksupport.claims import ClaimFailed, Claims
from mmcl.downstream.response import ood_response
from mmcl.experiments import downstream as experiment
from mmcl.proofs import assumptions

from mmcl.model.config import SyntheticConfig as _Config

FIG1 = _Config()  # the setting the chapters' checks measure (Figure 1), where the register judges premises

SEEDS = (0, 1)


def _noise_spread(cfg, mode="multi"):
    """The sd of each part of the noise response <w_r, zeta> at the end of training, mean over
    neurons and seeds (the chapter's ``spread``)."""
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s) for s in SEEDS])
    traj = mmcl.simulate(cfg, data, mode, "recursion")
    return {p: float(v.mean()) for p, v in ood_response(traj, data).spread().items()}


@pytest.fixture(scope="module")
def figure1():
    return experiment.config("default")


def test_the_d3_noise_check_fails_at_a_smaller_sigma0(figure1):
    """The chapter sec-downstream: App. D.3's O~(1/sqrt(dn)) for the multi-modal noise response fails by more than a
    factor 200 at Figure 1's setting, most of it the init part, proportional to our sigma0.  At
    sigma0 = 0.003 the same claim is false (about 90 times): the factor is a matter of sigma0."""
    def claim(cfg, c):
        c.lower("App. D.3's O~(1/sqrt(dn)) for the multi-modal noise response fails: the measured sd is more "
                "than 200 times it", paper="Appendix D.3", verdict="outside", premises=assumptions.premises(cfg),
                observed=_noise_spread(cfg)["total"] * math.sqrt(cfg.d * cfg.n), bound=200)

    claim(figure1, Claims(display=False).setting(FIG1))  # the chapter's check, at the chapter's setting
    with pytest.raises(ClaimFailed, match="Appendix D.3"):
        claim(figure1.replace(sigma0=0.003), Claims(display=False).setting(FIG1))


def test_the_init_part_check_fails_with_a_wrong_formula(figure1):
    """The chapter sec-downstream: the init part of the noise response has sd sigma0 sigma_xi sqrt(d) (0.447).  Against
    a wrong formula, sigma0 sigma_xi sqrt(d n) (as if it summed over the training noise), it fails."""
    cfg = figure1.replace(n_epochs=1)  # the init part <w_r(0), zeta> does not depend on training
    spread = _noise_spread(cfg)
    claim = dict(claim="the init part of the noise response has sd sigma0 sigma_xi sqrt(d) = 0.447",
                 paper="Eq. (11)", verdict="observation", observed=spread["init"], tol=0.01)
    Claims(display=False).setting(FIG1).near(target=cfg.init_noise, **claim)
    wrong = cfg.sigma0 * cfg.sigma_xi * math.sqrt(cfg.d * cfg.n)
    with pytest.raises(ClaimFailed, match="Eq. \\(11\\)"):
        Claims(display=False).setting(FIG1).near(target=wrong, **claim)


def test_the_condition_check_fails_at_the_papers_nu(figure1):
    """The chapter sec-downstream: a nu at cos(nu, mu) = 0.05 meets Sec. 3.3's condition (ratio 0.89, below 1).
    Figure 1's own nu (cos 1) does not: the same claim fails there."""
    claim = dict(claim="the ratio <nu, mu> sqrt(d)/||mu||^2 is 0.89, below 1: nu meets the condition",
                 paper="Sec. 3.3", verdict="observation", target=0.89, tol=0.005)
    Claims(display=False).setting(FIG1).near(observed=figure1.replace(nu_cos=experiment.TILTED).nu_condition, **claim)
    with pytest.raises(ClaimFailed, match="Sec. 3.3"):
        Claims(display=False).setting(FIG1).near(observed=figure1.replace(nu_cos=experiment.PAPER).nu_condition, **claim)


def test_the_chapters_sizes():
    """The chapter's experiment (mmcl.experiments.downstream): the Figure 1 setting, 5 seeds (20 with
    MMCL_BOOK_FULL=1) at five angles of nu including the paper's and the tilted one; "tiny" smaller."""
    assert experiment.config("default") == mmcl.SyntheticConfig() == experiment.config("full")
    assert experiment.sizes("default").seeds == 5 and experiment.sizes("full").seeds == 20
    assert experiment.sizes("default").angles == (experiment.PAPER, 0.5, 0.2, experiment.TILTED, 0.0)
    assert experiment.sizes("tiny").angles == (experiment.PAPER, experiment.TILTED)
    tiny = experiment.config("tiny")
    assert (tiny.n_epochs, tiny.d, tiny.d_tilde, tiny.n_heldout) == (20, 500, 500, 200)
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        experiment.config("medium")
