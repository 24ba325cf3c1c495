"""The one standardisation behind every linear probe (mmcl.downstream.probe)."""
import torch

from mmcl.downstream.probe import standardisation


def test_standardisation_centres_scales_and_leaves_constant_columns_unscaled():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(3, 40, 5, generator=g, dtype=torch.float64) * torch.tensor([1.0, 2.0, 0.5, 3.0, 1.0],
                                                                               dtype=torch.float64)
    X[..., 4] = 7.0  # a constant feature
    mean, scale = standardisation(X)
    assert mean.shape == scale.shape == (3, 5)
    Z = (X - mean[:, None]) / scale[:, None]
    torch.testing.assert_close(Z[..., :4].mean(1), torch.zeros(3, 4, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(Z[..., :4].std(1, correction=0), torch.ones(3, 4, dtype=torch.float64))
    assert torch.equal(scale[:, 4], torch.ones(3, dtype=torch.float64))
    torch.testing.assert_close(Z[..., 4], torch.zeros(3, 40, dtype=torch.float64))
    # along another dimension: the statistics of the rows of dim 0
    m0, s0 = standardisation(X[0], 0)
    torch.testing.assert_close(m0, X[0].mean(0))
    torch.testing.assert_close(s0[:4], X[0, :, :4].std(0, correction=0))
