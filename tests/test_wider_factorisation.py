"""mmcl.wider: the matrix-factorisation view (Zhang, Wang & Wang 2023), its graphs, and alternating gradient descent
(Ward & Kolda 2023): identities at float64 against independent computations, AGD's descent and
its initialisations, and clear errors on bad input."""
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from mmcl.wider import agd, graphs, factorisation as fz

F64 = torch.float64


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Small matrices: one thread is fastest, and on a shared CPU extra threads slow these tests by
    an order of magnitude (benchmarks/bench_factorization.py).  Restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def random_distribution(nv, nl, seed, sparsity=0.0):
    """A random joint distribution with every row and column non-empty."""
    g = torch.Generator().manual_seed(seed)
    P = torch.rand(nv, nl, generator=g, dtype=F64) ** 3
    if sparsity:
        P = P * (torch.rand(nv, nl, generator=g, dtype=F64) > sparsity)
    P[torch.arange(nv), torch.arange(nv) % nl] += 0.05  # keep every row and column alive
    P[torch.arange(nl) % nv, torch.arange(nl)] += 0.05
    return P / P.sum()


def loss_by_loops(P, F_V, F_L):
    """The spectral contrastive loss as two explicit sums over pairs (python floats)."""
    nv, nl = P.shape
    pv = [float(P[x].sum()) for x in range(nv)]
    pl = [float(P[:, l].sum()) for l in range(nl)]
    fv = [[float(v) / math.sqrt(pv[x]) for v in F_V[x]] for x in range(nv)]
    fl = [[float(v) / math.sqrt(pl[l]) for v in F_L[l]] for l in range(nl)]
    pos = neg = 0.0
    for x in range(nv):
        for l in range(nl):
            s = sum(a * b for a, b in zip(fv[x], fl[l]))
            pos += float(P[x, l]) * s
            neg += pv[x] * pl[l] * s * s
    return -2.0 * pos + neg


# ------------------------------------------------------------------------------------------
# the factorisation view
# ------------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(nv=st.integers(1, 9), nl=st.integers(1, 9), k=st.integers(1, 5), seed=st.integers(0, 10_000),
       sparsity=st.sampled_from([0.0, 0.5]))
def test_spectral_loss_equals_factorization_to_roundoff(nv, nl, k, seed, sparsity):
    P = random_distribution(nv, nl, seed, sparsity)
    g = torch.Generator().manual_seed(seed + 1)
    F_V, F_L = torch.randn(nv, k, generator=g, dtype=F64), torch.randn(nl, k, generator=g, dtype=F64)
    L = fz.spectral_contrastive_loss(P, F_V, F_L)
    Pt = P / torch.sqrt(P.sum(1))[:, None] / torch.sqrt(P.sum(0))[None, :]
    by_matrix = ((Pt - F_V @ F_L.T) ** 2).sum() - (Pt ** 2).sum()
    assert abs(float(L) - float(by_matrix)) <= 1e-10
    assert abs(float(fz.factorisation_loss(P, F_V, F_L)) - float(L)) <= 1e-10


def test_spectral_loss_matches_explicit_sums_over_pairs():
    P = random_distribution(6, 5, 3)
    g = torch.Generator().manual_seed(0)
    F_V, F_L = torch.randn(6, 3, generator=g, dtype=F64), torch.randn(5, 3, generator=g, dtype=F64)
    assert abs(float(fz.spectral_contrastive_loss(P, F_V, F_L)) - loss_by_loops(P, F_V, F_L)) <= 1e-12


@settings(max_examples=40, deadline=None)
@given(nv=st.integers(1, 10), nl=st.integers(1, 10), seed=st.integers(0, 10_000),
       sparsity=st.sampled_from([0.0, 0.6]))
def test_induced_graph_normalised_equals_Ptilde_Ptilde_T(nv, nl, seed, sparsity):
    P = random_distribution(nv, nl, seed, sparsity)
    A = fz.induced_image_graph(P)
    # independent: loops over captions, then the normalisation by the image marginal
    pv, pl = P.sum(1), P.sum(0)
    A_loop = sum(torch.outer(P[:, l], P[:, l]) / pl[l] for l in range(nl))
    assert float((A - A_loop).abs().max()) <= 1e-12
    assert float((A.sum(1) - pv).abs().max()) <= 1e-12  # degrees are the image marginal
    assert abs(float(A.sum()) - 1.0) <= 1e-12 and float((A - A.T).abs().max()) <= 1e-15
    Pt = fz.normalised_cooccurrence(P)
    Abar = A_loop / torch.sqrt(torch.outer(pv, pv))
    assert float((Abar - Pt @ Pt.T).abs().max()) <= 1e-10
    assert float((graphs.normalised_adjacency(A) - Pt @ Pt.T).abs().max()) <= 1e-10


def test_Ptilde_top_singular_pair_is_sqrt_marginals():
    P = random_distribution(7, 4, 1)
    Pt = fz.normalised_cooccurrence(P)
    s = torch.linalg.svdvals(Pt)
    assert abs(float(s[0]) - 1.0) <= 1e-12
    pv, pl = fz.marginals(P)
    assert float((Pt @ torch.sqrt(pl) - torch.sqrt(pv)).abs().max()) <= 1e-14


def test_optimal_factors_attain_eckart_young_minimum_and_perturbations_do_worse():
    P = random_distribution(8, 6, 2)
    k = 3
    F_V, F_L, minimum = fz.optimal_factors(P, k)
    s = torch.linalg.svdvals(fz.normalised_cooccurrence(P))
    assert abs(float(minimum) + float((s[:k] ** 2).sum())) <= 1e-12
    assert abs(float(fz.spectral_contrastive_loss(P, F_V, F_L)) - float(minimum)) <= 1e-12
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        dV, dL = 1e-3 * torch.randn(F_V.shape, generator=g, dtype=F64), 1e-3 * torch.randn(F_L.shape, generator=g, dtype=F64)
        assert float(fz.spectral_contrastive_loss(P, F_V + dV, F_L + dL)) >= float(minimum) - 1e-14


def test_single_modal_embedding_on_induced_graph_spans_the_multimodal_image_subspace():
    data = graphs.sample_joint(graphs.JointConfig(), 0)
    k = data.config.n_classes
    F_V, _, _ = fz.optimal_factors(data.P, k)
    f_single = graphs.spectral_embedding(fz.induced_image_graph(data.P), k)
    pv, _ = fz.marginals(data.P)
    angles = fz.principal_angles(F_V, torch.sqrt(pv)[:, None] * f_single)
    assert float(angles.max()) <= 1e-8


def test_principal_angles_zero_for_same_span_and_right_angle_for_orthogonal_spans():
    g = torch.Generator().manual_seed(0)
    U = torch.randn(10, 3, generator=g, dtype=F64)
    M = torch.randn(3, 3, generator=g, dtype=F64)
    assert float(fz.principal_angles(U, U @ M).max()) <= 1e-7
    E = torch.eye(10, dtype=F64)
    assert torch.allclose(fz.principal_angles(E[:, :2], E[:, 2:4]), torch.full((2,), math.pi / 2, dtype=F64))


def test_label_consistency_and_spectral_gap_of_block_graphs():
    C, s = 3, 4
    labels = torch.arange(C).repeat_interleave(s)
    block = (labels[:, None] == labels[None, :]).to(F64)
    assert graphs.label_consistency(block, labels) == 0.0
    # C disconnected cliques: eigenvalue 1 has multiplicity C, so lambda_C = 0 and lambda_{C+1} = 1
    assert abs(graphs.spectral_gap(block, C - 1)) <= 1e-12
    assert abs(graphs.spectral_gap(block, C) - 1.0) <= 1e-12
    t = 0.3
    mixed = (1 - t) * block / block.sum() + t * torch.ones_like(block) / block.numel()
    N = C * s
    expected = t * (N * N - C * s * s) / (N * N)  # the uniform part's mass on cross-class pairs
    assert abs(graphs.label_consistency(mixed, labels) - expected) <= 1e-14


def test_augmentation_graph_is_a_normalised_gaussian_kernel():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(6, 4, generator=g, dtype=F64)
    A = graphs.augmentation_graph(X, 0.7)
    K = torch.tensor([[math.exp(-float(((X[i] - X[j]) ** 2).sum()) / (4 * 0.49)) for j in range(6)] for i in range(6)],
                     dtype=F64)
    assert float((A - K / K.sum()).abs().max()) <= 1e-14


def test_median_distance_and_compare_graphs_widths_and_oracle_choice():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(7, 3, generator=g, dtype=F64)
    pairs = [math.dist(X[i].tolist(), X[j].tolist()) for i in range(7) for j in range(i + 1, 7)]
    assert abs(graphs.median_distance(X) - sorted(pairs)[len(pairs) // 2]) <= 1e-12  # 21 pairs: the middle one
    data = graphs.sample_joint(graphs.JointConfig(images_per_class=10, captions_per_class=3, dim=20), 0)
    comp = graphs.compare_graphs(data, width_factors=(0.5, 1.0))
    med = graphs.median_distance(data.images)
    assert comp.widths == pytest.approx([0.25 * med, 0.5 * med], rel=1e-14)
    errors = [a.probe_error for a in comp.augmentation]
    assert errors[comp.best] == min(errors) and comp.best == errors.index(min(errors))
    k, y = data.config.n_classes, data.image_labels
    train = torch.arange(len(y)) % 2 == 0  # the documented default split: every other image
    assert graphs.score_graph(fz.induced_image_graph(data.P), y, k) == comp.caption
    assert graphs.score_graph(fz.induced_image_graph(data.P), y, k, train) == comp.caption
    assert comp.raw_probe_error == graphs.linear_probe_error(data.images, y, train)


def test_linear_probe_separates_separable_classes_and_fails_on_shuffled_labels():
    g = torch.Generator().manual_seed(0)
    y = torch.arange(3).repeat(40)
    Z = 5.0 * torch.nn.functional.one_hot(y, 3).to(F64) + 0.1 * torch.randn(120, 3, generator=g, dtype=F64)
    train = torch.arange(120) % 2 == 0
    assert graphs.linear_probe_error(Z, y, train) == 0.0
    y_test_shuffled = y.clone()
    y_test_shuffled[~train] = (y[~train] + 1) % 3
    assert graphs.linear_probe_error(Z, y_test_shuffled, train) == 1.0


def test_sample_joint_is_a_reproducible_distribution_with_class_structure():
    cfg = graphs.JointConfig(caption_noise=0.2, mismatch=0.25)
    a, b = graphs.sample_joint(cfg, 5), graphs.sample_joint(cfg, 5)
    assert torch.equal(a.P, b.P) and torch.equal(a.images, b.images)
    assert abs(float(a.P.sum()) - 1.0) <= 1e-12 and bool((a.P > 0).all())
    # each image puts (1 - eta) + eta / C of its mass on captions of the class it is described as
    match = (a.described_as[:, None] == a.caption_labels[None, :]).to(F64)
    row_share = (a.P * match).sum(1) / a.P.sum(1)
    assert float((row_share - (0.8 + 0.2 / cfg.n_classes)).abs().max()) <= 1e-12
    flipped = (a.described_as != a.image_labels).to(F64).mean()
    assert 0.1 <= float(flipped) <= 0.4  # about the mismatch rate 0.25 of 200 images
    assert bool((graphs.sample_joint(cfg.__class__(mismatch=0.0), 5).described_as
                 == graphs.sample_joint(cfg.__class__(mismatch=0.0), 5).image_labels).all())
    assert not torch.equal(a.P, graphs.sample_joint(cfg, 6).P)


# ------------------------------------------------------------------------------------------
# alternating gradient descent
# ------------------------------------------------------------------------------------------

def f_obj(A, X, Y):
    return 0.5 * float(((A - X @ Y.T) ** 2).sum())


def test_agd_step_is_x_then_y_gradient_step_by_autograd():
    A = agd.low_rank_matrix(12, 9, 3, 4.0, 0)
    g = torch.Generator().manual_seed(1)
    X, Y = torch.randn(12, 4, generator=g, dtype=F64), torch.randn(9, 4, generator=g, dtype=F64)
    eta = 0.05
    Xr = X.clone().requires_grad_(True)
    (0.5 * ((A - Xr @ Y.T) ** 2).sum()).backward()
    X1 = X - eta * Xr.grad
    Yr = Y.clone().requires_grad_(True)
    (0.5 * ((A - X1 @ Yr.T) ** 2).sum()).backward()
    Y1 = Y - eta * Yr.grad
    Xs, Ys = agd.agd_step(A, X, Y, eta)
    assert float((Xs - X1).abs().max()) <= 1e-13 and float((Ys - Y1).abs().max()) <= 1e-13


def test_block_step_descent_identity_holds_exactly():
    A = agd.low_rank_matrix(15, 11, 4, 6.0, 2)
    g = torch.Generator().manual_seed(3)
    X, Y = torch.randn(15, 6, generator=g, dtype=F64), torch.randn(11, 6, generator=g, dtype=F64)
    eta = 0.3
    G = -(A - X @ Y.T) @ Y
    lhs = f_obj(A, X - eta * G, Y)
    rhs = f_obj(A, X, Y) - eta * float((G ** 2).sum()) + 0.5 * eta ** 2 * float(((G @ Y.T) ** 2).sum())
    assert abs(lhs - rhs) <= 1e-10 * max(1.0, abs(lhs))


@pytest.mark.parametrize("init", agd.INITS)
@pytest.mark.parametrize("kappa,seed", [(1.0, 0), (5.0, 1), (20.0, 2)])
def test_agd_objective_never_increases_at_the_documented_step(init, kappa, seed):
    A = agd.low_rank_matrix(60, 40, 4, kappa, seed)
    res = agd.agd(A, 8, init=init, max_iter=3000, seed=seed)
    h = res.rel_error
    assert bool(res.converged)
    assert bool((h[1:] <= h[:-1] * (1 + 1e-12)).all()), "the relative error went up at the default step"
    assert torch.allclose(res.step, 0.5 / torch.linalg.matrix_norm(A, ord=2))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ward_kolda_beats_small_gaussian_rank5_100x100_kappa10(seed):
    A = agd.low_rank_matrix(100, 100, 5, 10.0, seed)
    s = torch.linalg.svdvals(A)
    assert abs(float(s[0] / s[4]) - 10.0) <= 1e-9 and float(s[5]) <= 1e-12
    wk = agd.agd(A, 10, init="ward_kolda", tol=1e-6, seed=seed)
    ga = agd.agd(A, 10, init="gaussian", tol=1e-6, seed=seed)
    assert bool(wk.converged) and bool(ga.converged)
    assert float(wk.rel_error[-1]) <= 1e-6 and float(ga.rel_error[-1]) <= 1e-6
    recomputed = float(((A - wk.X @ wk.Y.T) ** 2).sum() / (A ** 2).sum())
    assert abs(recomputed - float(wk.rel_error[-1])) <= 1e-12
    assert int(wk.iterations) < int(ga.iterations)


def test_ward_kolda_init_lies_in_column_span_of_A_and_is_unbalanced():
    A = agd.low_rank_matrix(30, 20, 3, 5.0, 0)
    X0, Y0 = agd.initial_factors(A, 6, "ward_kolda", step=0.1, seed=0)
    U = torch.linalg.svd(A).U[:, :3]
    assert float((X0 - U @ (U.T @ X0)).abs().max()) <= 1e-12
    assert float(torch.linalg.matrix_norm(X0)) > 100 * float(torch.linalg.matrix_norm(Y0))
    # the product does not depend on the step: eta cancels between X_0 and Y_0
    X1, Y1 = agd.initial_factors(A, 6, "ward_kolda", step=0.01, seed=0)
    assert float((X0 @ Y0.T - X1 @ Y1.T).abs().max()) <= 1e-14


def test_batched_agd_freezes_each_member_at_its_first_success():
    A = torch.stack([agd.low_rank_matrix(40, 30, 3, k, 0) for k in (2.0, 12.0)])
    res = agd.agd(A, 6, tol=1e-6)
    h = res.rel_error  # (T+1, 2)
    for b in range(2):
        first = int((h[:, b] <= 1e-6).nonzero()[0])
        assert first == int(res.iterations[b])
        assert bool((h[first:, b] == h[first, b]).all())
    assert int(res.iterations[0]) < int(res.iterations[1])


def test_loglog_slope_recovers_a_power_law():
    x = torch.tensor([1.0, 2.0, 5.0, 10.0], dtype=F64)
    y = 3.0 * x[:, None] ** 1.7 * torch.ones(1, 3, dtype=F64)
    slope, intercept = agd.loglog_slope(x, y)
    assert abs(slope - 1.7) <= 1e-10 and abs(intercept - math.log(3.0)) <= 1e-10


def test_ward_kolda_bound_formula():
    assert agd.ward_kolda_bound(10.0, 1e-6) == pytest.approx(100 * math.log(1e6), rel=1e-14)
    assert agd.ward_kolda_bound(2.0, 0.1, d=4, r=1) == pytest.approx(4 * math.log(10.0), rel=1e-14)


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------

def test_agd_rejects_rank_larger_than_the_matrix():
    with pytest.raises(ValueError, match=r"rank=31 is larger than the matrix"):
        agd.agd(agd.low_rank_matrix(40, 30, 3, 2.0, 0), 31)


@pytest.mark.parametrize("step", [-0.1, 0.0, float("nan"), float("inf")])
def test_agd_rejects_non_positive_step(step):
    with pytest.raises(ValueError, match=r"step must be a finite number > 0"):
        agd.agd(agd.low_rank_matrix(10, 8, 2, 2.0, 0), 3, step=step)


@pytest.mark.parametrize("kwargs,match", [
    (dict(tol=0.0), r"tol must be a finite number in \(0, 1\)"), (dict(tol=1.5), "tol must be a finite number in"),
    (dict(max_iter=0), "max_iter must be"), (dict(init="xavier"), "init='xavier' is not supported"),
    (dict(rank=0), "rank must be a positive integer"),
])
def test_agd_rejects_bad_arguments(kwargs, match):
    args = dict(rank=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        agd.agd(agd.low_rank_matrix(10, 8, 2, 2.0, 0), **args)


def test_agd_rejects_zero_and_non_finite_matrices():
    with pytest.raises(ValueError, match="zero matrix"):
        agd.agd(torch.zeros(5, 4, dtype=F64), 2)
    A = agd.low_rank_matrix(5, 4, 2, 2.0, 0)
    A[0, 0] = float("nan")
    with pytest.raises(ValueError, match="non-finite"):
        agd.agd(A, 2)


def test_agd_reports_divergence_with_the_step():
    from mmcl.dynamics import DivergenceError
    with pytest.raises(DivergenceError, match="smaller step"):
        agd.agd(agd.low_rank_matrix(20, 20, 3, 2.0, 0), 5, init="gaussian", step=50.0, max_iter=2000)


@pytest.mark.parametrize("P,match", [
    (torch.tensor([[0.5, -0.1], [0.3, 0.3]], dtype=F64), "negative entries"),
    (torch.tensor([[0.5, 0.2], [0.3, 0.3]], dtype=F64), "sum to 1.3"),
    (torch.tensor([[0.5, 0.5], [0.0, 0.0]], dtype=F64), "row .* with zero mass"),
    (torch.tensor([[0.5, 0.0], [0.5, 0.0]], dtype=F64), "column .* with zero mass"),
    (torch.tensor([0.5, 0.5], dtype=F64), "2-dimensional"),
    (torch.tensor([[0.5, float("nan")], [0.3, 0.2]], dtype=F64), "non-finite"),
    (torch.tensor([[1, 0], [0, 0]]), "floating-point"),
])
def test_non_distribution_P_is_rejected(P, match):
    for fn in (fz.normalised_cooccurrence, fz.induced_image_graph):
        with pytest.raises(ValueError, match=match):
            fn(P)
    with pytest.raises(ValueError, match=match):
        fz.spectral_contrastive_loss(P, torch.ones(P.shape[0], 1, dtype=F64) if P.dim() == 2 else torch.ones(2, 1),
                                     torch.ones(P.shape[-1], 1, dtype=F64))


def test_encoder_tables_with_wrong_shapes_are_rejected():
    P = random_distribution(4, 3, 0)
    with pytest.raises(ValueError, match="F_V has 5 rows but P has 4"):
        fz.spectral_contrastive_loss(P, torch.ones(5, 2, dtype=F64), torch.ones(3, 2, dtype=F64))
    with pytest.raises(ValueError, match="share the embedding dimension"):
        fz.factorisation_loss(P, torch.ones(4, 2, dtype=F64), torch.ones(3, 1, dtype=F64))
    with pytest.raises(ValueError, match="k=5 is larger than the matrix"):
        fz.optimal_factors(P, 5)


@pytest.mark.parametrize("field,value", [
    ("n_classes", 1), ("images_per_class", 0), ("dim", 0), ("concentration", 0.0), ("caption_noise", 1.0),
    ("caption_noise", -0.1), ("mismatch", 1.5), ("signal", -1.0), ("sigma", 0.0), ("n_classes", 2.5),
])
def test_joint_config_rejects_bad_fields(field, value):
    with pytest.raises(ValueError, match=f"JointConfig.{field}"):
        graphs.JointConfig(**{field: value})


@pytest.mark.parametrize("field,value", [("C", 0.0), ("D", -1.0), ("alpha", float("nan")), ("step_scale", 0),
                                         ("check_every", 0)])
def test_agd_config_rejects_bad_fields(field, value):
    with pytest.raises(ValueError, match=f"AGDConfig.{field}"):
        agd.AGDConfig(**{field: value})


def test_graph_helpers_reject_bad_graphs_and_widths():
    with pytest.raises(ValueError, match="symmetric"):
        graphs.normalised_adjacency(torch.tensor([[1.0, 0.5], [0.0, 1.0]], dtype=F64))
    with pytest.raises(ValueError, match="zero degree"):
        graphs.normalised_adjacency(torch.tensor([[1.0, 0.0], [0.0, 0.0]], dtype=F64))
    with pytest.raises(ValueError, match="width must be a finite number > 0"):
        graphs.augmentation_graph(torch.zeros(3, 2, dtype=F64), 0.0)
    with pytest.raises(ValueError, match="kappa must be"):
        agd.low_rank_matrix(5, 5, 2, 0.5)
