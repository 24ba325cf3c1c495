"""The computations behind the figures of the chapters "Multi-modal contrastive learning as matrix
factorisation" and "Alternating gradient descent on the factorisation": each reproduces what the
library's building blocks give when called one by one, and rejects bad input naming the
parameter; and the size tables of their experiment modules (mmcl.experiments.matrix_factorisation,
mmcl.experiments.alternating_gd)."""
import dataclasses
import math

import pytest
import torch

from mmcl.experiments import alternating_gd as agd_ex
from mmcl.experiments import matrix_factorisation as mf_ex
from mmcl.wider import agd, graphs
from mmcl.wider import factorisation as fz

F64 = torch.float64
SMALL = graphs.JointConfig(images_per_class=10, captions_per_class=3, dim=20)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ------------------------------------------------------------------------------------------
# graphs.snr_sweep
# ------------------------------------------------------------------------------------------

def test_snr_sweep_reproduces_compare_graphs_and_score_graph_draw_by_draw():
    signals, seeds, mismatches = [0.0, 2.0, 8.0], [0, 1], [0.0, 0.1]
    sw = graphs.snr_sweep(SMALL, signals=signals, seeds=seeds, mismatches=mismatches, progress=False)
    chance = 1.0 - 1.0 / SMALL.n_classes
    for i, sig in enumerate(signals):
        for j, seed in enumerate(seeds):
            d = graphs.sample_joint(dataclasses.replace(SMALL, signal=sig), seed)
            c = graphs.compare_graphs(d)
            assert float(sw.probe["augmentation"][i, j]) == pytest.approx(c.augmentation[c.best].probe_error, abs=1e-7)
            assert float(sw.probe["raw"][i, j]) == pytest.approx(c.raw_probe_error, abs=1e-7)
            assert float(sw.probe["caption 0.1"][i, j]) == pytest.approx(c.caption.probe_error, abs=1e-7)
            d0 = graphs.sample_joint(dataclasses.replace(SMALL, signal=sig, mismatch=0.0), seed)
            sc0 = graphs.score_graph(fz.induced_image_graph(d0.P), d0.image_labels, SMALL.n_classes)
            assert float(sw.probe["caption 0.0"][i, j]) == pytest.approx(sc0.probe_error, abs=1e-7)
    # the caption graph ignores the images: its errors are constant along the signals
    for m in mismatches:
        assert bool((sw.probe[f"caption {m}"] == sw.probe[f"caption {m}"][0]).all())
    # the plane: the first seed's augmentation graphs at ||mu|| = 2 and 8, caption graphs at 2
    snr = [dataclasses.replace(SMALL, signal=v).snr for v in signals]
    assert sorted(sw.plane) == sorted([f"augmentation, SNR {snr[1]:.1f}", f"augmentation, SNR {snr[2]:.1f}",
                                       "caption, mismatch 0.0", "caption, mismatch 0.1"])
    d = graphs.sample_joint(dataclasses.replace(SMALL, signal=8.0), 0)
    c = graphs.compare_graphs(d)
    assert sw.plane[f"augmentation, SNR {snr[2]:.1f}"] == [(a.alpha / chance, a.gap) for a in c.augmentation]
    assert torch.allclose(sw.snr, torch.tensor(snr))
    assert sw.signals == signals and sw.seeds == seeds and sw.config == SMALL


def test_snr_sweep_rejects_bad_arguments_naming_them():
    with pytest.raises(ValueError, match=r"mismatches=\[0.0, 0.3\] must contain cfg.mismatch=0.1"):
        graphs.snr_sweep(SMALL, signals=[1.0], seeds=[0], mismatches=[0.0, 0.3], progress=False)
    with pytest.raises(ValueError, match="seeds must not be empty"):
        graphs.snr_sweep(SMALL, signals=[1.0], seeds=[], progress=False)
    with pytest.raises(ValueError, match="cfg must be a JointConfig"):
        graphs.snr_sweep({"n_classes": 4})


def test_scalar_checks_name_the_parameter():
    with pytest.raises(ValueError, match=r"l2 must be a finite number > 0"):
        graphs.linear_probe_error(torch.zeros(4, 2, dtype=F64), torch.tensor([0, 1, 0, 1]),
                                  torch.tensor([True, True, False, False]), l2=0.0)
    with pytest.raises(ValueError, match=r"JointConfig.mismatch must be a finite number in \[0, 1\]"):
        graphs.JointConfig(mismatch=1.5)
    with pytest.raises(ValueError, match=r"JointConfig.dim must be a positive integer"):
        graphs.JointConfig(dim=True)
    with pytest.raises(ValueError, match=r"eps must be a finite number in \(0, 1\)"):
        agd.ward_kolda_bound(2.0, 1.0)
    with pytest.raises(ValueError, match=r"d must be an integer >= 3"):
        agd.ward_kolda_bound(2.0, 0.1, d=2, r=3)
    with pytest.raises(ValueError, match="progress must be True or False"):
        agd.agd(agd.low_rank_matrix(6, 5, 2, 2.0), 2, progress=1)


# ------------------------------------------------------------------------------------------
# AGD experiments
# ------------------------------------------------------------------------------------------

def test_runs_on_test_matrices_are_agd_on_low_rank_matrices():
    runs = agd.runs_on_test_matrices([0, 3], "gaussian", m=20, n=15, r=2, d=4, kappa=3.0, tol=1e-5)
    for s, res in zip([0, 3], runs):
        ref = agd.agd(agd.low_rank_matrix(20, 15, 2, 3.0, seed=s), 4, init="gaussian", tol=1e-5, seed=s)
        assert torch.equal(res.rel_error, ref.rel_error) and int(res.iterations) == int(ref.iterations)


def test_condition_scan_and_step_scan_match_iterations_vs_condition():
    kappas, seeds = [2.0, 4.0], [0, 1]
    scan = agd.condition_scan(kappas, seeds, m=20, n=20, r=2, d=4, tol=1e-5, max_iter=5000, progress=False)
    for init in agd.INITS:
        T = agd.iterations_vs_condition(kappas, seeds, m=20, n=20, r=2, d=4, init=init, tol=1e-5, max_iter=5000,
                                        progress=False)
        assert torch.equal(scan.iterations[init], T)
        assert scan.slopes[init] == pytest.approx(agd.loglog_slope(kappas, T.double())[0], rel=1e-12)
    assert scan.bound == pytest.approx([k * k * math.log(1e5) for k in kappas], rel=1e-14)
    steps = agd.step_scan([0.25, 0.5], [0], kappa=3.0, max_iter=5000)
    for init in agd.INITS:
        T = torch.stack([agd.iterations_vs_condition([3.0], [0], init=init, step_scale=c, max_iter=5000,
                                                     progress=False)[0] for c in (0.25, 0.5)])
        assert torch.equal(steps.iterations[init], T)
        # a larger step needs fewer iterations here
        assert int(T[1, 0]) < int(T[0, 0])


@pytest.mark.parametrize("init", agd.INITS)
def test_excess_trajectory_is_agd_step_by_step_above_the_eckart_young_optimum(init):
    Pt = fz.normalised_cooccurrence(graphs.sample_joint(SMALL, 0).P)
    k = SMALL.n_classes
    tr = agd.excess_trajectory(Pt, k, init, n_steps=60, seed=0)
    s = torch.linalg.svdvals(Pt)
    assert tr["opt"] == pytest.approx(float((s[k:] ** 2).sum() / (s ** 2).sum()), rel=1e-12)
    assert len(tr["excess"]) == len(tr["angle"]) == 61
    ref = agd.agd(Pt, k, init=init, max_iter=60, seed=0, tol=1e-15)  # tol unreachable: 60 steps
    assert max(abs(float(e) - tr["opt"] - x) for e, x in zip(ref.rel_error, tr["excess"])) <= 1e-12
    assert min(tr["excess"]) >= -1e-12  # never below the optimum
    first = tr["first"]
    assert first is not None and tr["excess"][first] <= 1e-6 and all(e > 1e-6 for e in tr["excess"][:first])
    # the angle to the optimal subspace, computed independently from the final factor
    U = torch.linalg.svd(Pt, full_matrices=False).U[:, :k]
    X = agd.initial_factors(Pt, k, init, step=agd.default_step(Pt), seed=0)[0]
    cos0 = torch.linalg.svdvals(torch.linalg.qr(X).Q.T @ U).min().clamp(max=1.0)
    assert tr["angle"][0] == pytest.approx(math.acos(float(cos0)), abs=1e-6)


def test_excess_trajectory_rejects_bad_arguments():
    A = agd.low_rank_matrix(6, 5, 2, 2.0)
    with pytest.raises(ValueError, match="k=6 is larger than the matrix"):
        agd.excess_trajectory(A, 6)
    with pytest.raises(ValueError, match="n_steps must be a non-negative integer"):
        agd.excess_trajectory(A, 2, n_steps=-1)
    with pytest.raises(ValueError, match="M must be 2-dimensional"):
        agd.excess_trajectory(torch.ones(2, 3, 3, dtype=F64), 2)


# ------------------------------------------------------------------------------------------
# the experiment modules' sizes
# ------------------------------------------------------------------------------------------

def test_matrix_factorisation_sizes():
    s = {size: mf_ex.sizes(size) for size in ("tiny", "default", "full")}
    assert s["default"].sweep_seeds == 3 and s["full"].sweep_seeds == 10 and s["tiny"].sweep_seeds < 3
    assert s["default"].signals == s["full"].signals == graphs.SIGNALS  # what the chapter sweeps
    # "tiny" keeps ||mu|| = 0 and the two signals of the alpha-gap plane (SNR 0.1 and 0.4)
    assert s["tiny"].signals == (0.0, 2.0, 8.0) and set(s["tiny"].signals) <= set(graphs.SIGNALS)
    assert mf_ex.config("default") == graphs.JointConfig() == mf_ex.config("tiny") == mf_ex.config("full")
    for bad in (lambda: mf_ex.sizes("medium"), lambda: mf_ex.config("medium")):
        with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
            bad()


def test_alternating_gd_sizes():
    s = {size: agd_ex.sizes(size) for size in ("tiny", "default", "full")}
    assert s["default"].seeds == 5 and s["full"].seeds == 20 and s["tiny"].seeds < 5
    assert s["default"].kappas == s["full"].kappas == (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
    assert s["default"].step_scales == s["full"].step_scales == (0.05, 0.1, 0.2, 0.5, 1.0)
    assert s["default"].n_steps == s["full"].n_steps == 150
    assert s["tiny"].n_steps < 150 and set(s["tiny"].kappas) < set(s["default"].kappas)
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        agd_ex.sizes("medium")


def test_figure_modules_hold_no_size_table():
    """Sizes belong to the experiment modules: the figure modules only draw."""
    import inspect

    from mmcl.figures import alternating_gd, matrix_factorisation

    for mod in (alternating_gd, matrix_factorisation):
        src = inspect.getsource(mod)
        assert '"tiny"' not in src and "lru_cache" not in src, mod.__name__


# ------------------------------------------------------------------------------------------
# the tables the matrix-factorisation chapter prints
# ------------------------------------------------------------------------------------------

def test_comparison_table_prints_every_graph_of_the_comparison():
    d = graphs.sample_joint(SMALL, seed=0)
    comp = graphs.compare_graphs(d)
    lines = mf_ex.comparison_table(comp, SMALL.n_classes).splitlines()
    assert len(lines) == 1 + 1 + len(comp.widths) + 1  # header, caption, widths, raw probe
    chance = 1.0 - 1.0 / SMALL.n_classes
    cap = lines[1].split()
    assert cap[0] == "caption-induced"
    assert [float(v) for v in cap[1:]] == pytest.approx(
        [comp.caption.alpha, comp.caption.alpha / chance, comp.caption.gap, comp.caption.probe_error],
        abs=5e-3)
    assert [ln.endswith("<- best (oracle)") for ln in lines[2:-1]] == [
        i == comp.best for i in range(len(comp.widths))]
    assert float(lines[-1].split()[-1]) == pytest.approx(comp.raw_probe_error, abs=5e-3)
    with pytest.raises(ValueError, match="comp must be a GraphComparison"):
        mf_ex.comparison_table("table", 4)
    with pytest.raises(ValueError, match="n_classes must be an integer >= 2"):
        mf_ex.comparison_table(comp, 1)


def test_sweep_table_prints_the_mean_probe_error_of_every_graph():
    sw = graphs.snr_sweep(SMALL, signals=[0.0, 8.0], seeds=[0, 1], mismatches=[0.0, 0.1], progress=False)
    lines = mf_ex.sweep_table(sw).splitlines()
    assert [float(v) for v in lines[0].split()[2:]] == pytest.approx(sw.snr.tolist(), abs=5e-3)
    assert [ln[:16].strip() for ln in lines[1:]] == list(sw.probe)
    for ln, v in zip(lines[1:], sw.probe.values()):
        assert [float(x) for x in ln[16:].split()] == pytest.approx(v.mean(1).tolist(), abs=5e-3)
    with pytest.raises(ValueError, match="sweep must be an SNRSweep"):
        mf_ex.sweep_table(None)
