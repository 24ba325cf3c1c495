"""Chapter "The assumptions" (sec-assumptions): the computations behind its figures."""
import math

import pytest
import sympy as sp
import torch

import mmcl
from mmcl.downstream.evaluation import evaluate_all
from mmcl.experiments.figure1 import final_metrics, one_at_a_time
from mmcl.experiments import assumptions as ex
from mmcl.proofs import assumptions as A

CFG = mmcl.SyntheticConfig(d=300, d_tilde=250, n=24, m=10, M=10, n_epochs=30, n_test=60, n_heldout=200)


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("MMCL_CACHE", "0")


def test_vacuous_point_of_the_printed_bound_matches_sympy():
    c, sigma = sp.symbols("c sigma", positive=True)
    bound = sp.sqrt(1 - sp.exp(-2 * c**2 / (sp.pi * sigma**2)))
    for factor in (2, 3):
        exact = float(sp.solve(sp.Eq(factor * bound, 1), c)[0].subs(sigma, 1.5))
        got = A.anticoncentration_vacuous_from(1.5, factor=float(factor))
        assert got == pytest.approx(exact, rel=1e-12)
        assert A.anticoncentration_bound(got, 1.5, factor=float(factor)).item() == pytest.approx(1.0, rel=1e-12)
    assert A.anticoncentration_vacuous_from() == pytest.approx(0.6722, abs=1e-4)  # the chapter's "0.67 sigma"
    assert A.anticoncentration_vacuous_from(1.0, factor=1.0) == math.inf  # the corrected bound never says nothing


def test_vacuous_point_rejects_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        A.anticoncentration_vacuous_from(0.0)
    with pytest.raises(ValueError, match="factor"):
        A.anticoncentration_vacuous_from(1.0, factor=-2.0)


def test_anticoncentration_curves():
    cur = ex.anticoncentration_curves(101, 3.0)
    assert cur.r.shape == (100,) and cur.r[0] > 0 and cur.r[-1].item() == pytest.approx(3.0)
    torch.testing.assert_close(cur.printed, 2 * cur.corrected)
    assert bool((cur.corrected >= cur.exact).all())  # a valid upper bound ...
    assert (cur.corrected / cur.exact).max().item() < 1.01  # ... within 1 %
    # the printed bound exceeds 1 exactly beyond vacuous_from
    torch.testing.assert_close(cur.printed > 1, cur.r > cur.vacuous_from)
    with pytest.raises(ValueError, match="n_points"):
        ex.anticoncentration_curves(1)
    with pytest.raises(ValueError, match="r_max"):
        ex.anticoncentration_curves(10, -1.0)


def test_final_metrics_agrees_with_unbatched_runs():
    seeds = [0, 1]
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(CFG, s) for s in seeds])
    traj = mmcl.simulate(CFG, data, "single", "recursion")
    fm = final_metrics(traj, data)
    assert set(fm) == {"adapt", "transfer", "gamma", "rho"}
    for j, seed in enumerate(seeds):
        d1 = mmcl.sample_synthetic(CFG, seed)
        t1 = mmcl.simulate(CFG, d1, "single", "recursion")
        ev = evaluate_all(t1, d1)
        assert fm["adapt"][j].item() == pytest.approx(ev["adapt"].accuracy[-1].item(), abs=1e-6)
        assert fm["transfer"][j].item() == pytest.approx(ev["transfer"].accuracy[-1].item(), abs=1e-6)
        assert fm["gamma"][j].item() == pytest.approx(t1.gamma[-1].max().item(), rel=1e-4)
        assert fm["rho"][j].item() == pytest.approx(t1.rho[-1].max().item(), rel=1e-4)
    with pytest.raises(ValueError, match="batch"):
        final_metrics(t1, d1)


def test_c_mu_sweep_sets_the_second_modality_signal():
    c_mus = [1.0, 3.0]
    out = one_at_a_time("c_mu", c_mus, [0], "multi", base=CFG)
    assert set(out) == {"multi"}
    for k, cm in enumerate(c_mus):
        cfg = CFG.replace(mu_tilde_norm=cm * CFG.mu_norm)
        traj = mmcl.simulate(cfg, mmcl.sample_synthetic(cfg, 0), "multi", "recursion")
        assert out["multi"]["gamma"][k, 0].item() == pytest.approx(traj.gamma[-1].max().item(), rel=1e-4)
    # a stronger second modality: more signal learned
    assert out["multi"]["gamma"][1, 0] > out["multi"]["gamma"][0, 0]


def test_sizes_default_is_what_the_chapter_computed():
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")
    assert ex.sizes("default").seeds == 3 and ex.sizes("full").seeds == 10
    assert list(ex.sizes("default").c_mus) == [0.5, 1.0, 1.5, 2.0, 2.66, 3.0, 4.0, 6.0]
    conds = ex.conditions_result("tiny")
    assert [c.key for c in conds] == [c.key for c in A.check_assumption41(mmcl.SyntheticConfig())]


def test_sizes():
    assert set(ex.BY_SIZE) == {"tiny", "default", "full"}
    assert ex.sizes("tiny").seeds < ex.sizes("default").seeds and len(ex.sizes("tiny").c_mus) < 8
    assert list(ex.sizes("full").c_mus) == list(ex.sizes("default").c_mus)
    # tiny: what the tests draw, 20 epochs in d = d~ = 500, scored on 200 held-out samples
    assert ex.config("tiny") == mmcl.SyntheticConfig().replace(n_epochs=20, d=500, d_tilde=500, n_heldout=200)
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_figure1_runs_leakage_is_the_noise_part_of_the_signal_inner_product():
    runs = ex.figure1_runs("tiny")
    leak = runs.leakage()
    data = runs.data
    xi, mu = data.xi.double(), data.mu.double()
    proj = (xi @ mu[..., None])[..., 0] / (xi * xi).sum(-1)  # <xi_i, mu> / |xi_i|^2, (seeds, n)
    for mode, traj in runs.runs.items():
        # Eq. (11): w_r(t) - w_r(0) - gamma_r(t) mu/|mu|^2 = sum_i rho_ri(t) xi_i/|xi_i|^2
        direct = torch.einsum("stmn,sn->stm", traj.rho.double(), proj).abs().amax().item()
        assert leak[mode] == pytest.approx(direct, rel=1e-3, abs=1e-6)
        assert 0.0 < leak[mode] < 1.0
    scale = runs.initial_scale()
    direct = (data.W0 @ data.mu[..., None]).abs().flatten().median().item()
    assert scale == pytest.approx(direct, rel=1e-6)


def test_the_corrected_bounds_excess_is_its_ratio_to_the_exact_probability():
    from mmcl.experiments.assumptions import anticoncentration_curves

    c = anticoncentration_curves(50)
    assert torch.allclose(c.excess, c.corrected / c.exact - 1)
    assert bool((c.excess >= 0).all())  # the corrected bound is an upper bound
