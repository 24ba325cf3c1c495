"""The computation behind the chapter sec-multimodal's stage-1 figure (mmcl.proofs.multi_stage1.stage1_end): each of
its parts equals an independent computation (the linear map iterated step by step, explicit
loops over neurons and steps, the functions it bundles), and it rejects a mismatched run; and the
size table of the chapter's experiment module (mmcl.experiments.multimodal)."""
import math

import pytest
import torch

import mmcl
from mmcl.experiments import multimodal as ex
from mmcl.proofs import multi_stage1 as sync
from mmcl.proofs import predictions as theory


@pytest.fixture(scope="module")
def run(small_cfg):
    cfg = small_cfg.replace(n_epochs=60)
    data = mmcl.SyntheticData.stack([mmcl.sample_synthetic(cfg, s, dtype=torch.float64) for s in (0, 1)])
    multi = mmcl.simulate(cfg, data, "multi", "recursion", record_derivatives=True)
    return cfg, data, multi, sync.synchronisation(data, multi)


def test_stage1_end_bundles_the_lemmas_functions(run):
    cfg, data, multi, syn = run
    end = sync.stage1_end(syn, multi, cfg)
    assert end.t1 == theory.t1_multi(cfg) and end.k1 == math.floor(theory.t1_multi(cfg))
    assert torch.allclose(end.t1_measured, theory.measured_t1(multi, level=1.0), equal_nan=True)
    assert torch.equal(end.spread, sync.loss_derivative_spread(multi))
    assert torch.equal(end.max_gamma, multi.gamma.amax(-1))


def test_stage1_end_linear_map_and_lemma_d4_by_explicit_loops(run):
    cfg, data, multi, syn = run
    end = sync.stage1_end(syn, multi, cfg)
    K, m = syn.u.shape[-2:]
    rate = 0.48 * cfg.c_mu * cfg.lr * cfg.mu_norm ** 2 / (cfg.m * cfg.tau)
    for b in range(2):
        k = float(syn.kappa[b])
        # the linear map (u, v) -> (u + kappa v, v + kappa u), iterated; gamma_r(t) = (u(t) - u(0)) ||mu||
        u, v = syn.u[b, 0].clone(), syn.v[b, 0].clone()
        for t in range(K):
            assert float(end.predicted_gamma[b, t]) == pytest.approx(float(((u - syn.u[b, 0]) * cfg.mu_norm).max()),
                                                                    rel=1e-9, abs=1e-12)
            u, v = u + k * v, v + k * u
        # Lemma D.4 (43) for the neurons in step at t = 0, and the first step at which A_r(t) falls below it
        first = None
        for t in range(K):
            best = -math.inf
            for r in range(m):
                a0, b0 = float(syn.u[b, 0, r]) * cfg.mu_norm, float(syn.v[b, 0, r]) * cfg.mu_tilde_norm
                if a0 * b0 <= 0:
                    continue
                bound = (1 + rate) ** t * (abs(a0) + abs(b0) / cfg.c_mu) - 1
                best = max(best, bound)
                A = math.copysign(1.0, a0) * float(syn.u[b, t, r]) * cfg.mu_norm
                if A < bound and first is None:
                    first = int(syn.steps[t])
            assert float(end.d4_best[b, t]) == pytest.approx(best, rel=1e-9)
        assert end.first_violation[b] == first
    assert any(f is not None for f in end.first_violation)  # the comparison above saw a violation


def test_stage1_end_rejects_a_mismatched_run(run):
    cfg, data, multi, syn = run
    short = mmcl.simulate(cfg.replace(n_epochs=20), data, "multi", "recursion", record_derivatives=True)
    with pytest.raises(ValueError, match="syn"):
        sync.stage1_end(syn, short, cfg)
    single = mmcl.simulate(cfg, data, "single", "recursion")
    with pytest.raises(ValueError, match="multi-modal"):
        sync.stage1_end(syn, single, cfg)
    with pytest.raises(ValueError, match="syn must be a Synchronisation"):
        sync.stage1_end(None, multi, cfg)
    with pytest.raises(ValueError, match="cfg"):
        sync.stage1_end(syn, multi, "cfg")


def test_sizes():
    assert [ex.sizes(k).seeds for k in ("tiny", "default", "full")] == [1, 5, 20]
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")  # what the chapter runs
    assert ex.config("tiny") == mmcl.SyntheticConfig().replace(n_epochs=100)  # past Lemma 5.4's T1 = 86
    assert ex.config("tiny").n_epochs > theory.t1_multi(ex.config("tiny"))
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_sync_summary_counts_by_explicit_loops_and_prints_itself(run):
    cfg, data, multi, syn = run
    runs = ex.MultimodalRuns(cfg=cfg, seeds=[0, 1], data=data, multi=multi, single=multi, syn=syn)
    s = ex.sync_summary(runs)
    u, v = syn.u, syn.v  # (B, K, m)
    B, K, m = u.shape
    opposite = [(b, r) for b in range(B) for r in range(m) if float(u[b, 0, r] * v[b, 0, r]) < 0]
    assert s.opposite == len(opposite) and s.m == cfg.m
    assert s.n_opposite == [sum(1 for bb, _ in opposite if bb == b) for b in range(B)]
    in_step_end = [(b, r) for b, r in opposite if float(u[b, -1, r] * v[b, -1, r]) > 0]
    # a neuron that synchronises and stays so ends in step; every stalled one ends out of step
    assert s.synced + len(s.stalled) == s.opposite
    assert s.synced >= len(in_step_end) if not s.kept else s.synced == len(in_step_end)
    right = sum(1 for b, r in opposite if float(syn.sign[b, r]) == float(torch.sign(u[b, 0, r] + v[b, 0, r])))
    assert s.sign_right == pytest.approx(right / len(opposite))
    assert s.kappa == pytest.approx(theory.pairing_rate(cfg))
    text = str(s)
    assert f"in step by the end: {s.synced} of {s.opposite}" in text
    assert all(len(line) <= 88 for line in text.splitlines())
    with pytest.raises(ValueError, match="runs must be a MultimodalRuns"):
        ex.sync_summary(syn)
