import pytest

import mmcl


@pytest.fixture(scope="session")
def small_cfg():
    """A small configuration that runs in milliseconds but keeps all the paper's ingredients."""
    return mmcl.SyntheticConfig(d=300, d_tilde=250, n=24, m=10, M=10, n_epochs=200, n_test=60, n_heldout=200)

