"""Chapter "Reading guide" (sec-reading-guide): its sizes and the runs its figure draws
(mmcl.experiments.reading_guide); the drawing itself is tested with every registered figure."""
import pytest

import mmcl
from mmcl.experiments import reading_guide as ex
from mmcl.figures import reading_guide as figs


def test_sizes():
    assert set(ex.BY_SIZE) == {"tiny", "default", "full"}
    assert ex.sizes("default").seeds == 5 and ex.sizes("full").seeds == 20 and ex.sizes("tiny").seeds < 5
    assert ex.config("default") == mmcl.SyntheticConfig() == ex.config("full")  # what the chapter runs
    assert ex.config("tiny") == mmcl.SyntheticConfig().replace(n_epochs=20)
    with pytest.raises(ValueError, match="size='medium' is unknown; valid: 'tiny', 'default', 'full'"):
        ex.config("medium")


def test_figure1_result_runs_the_seeds_and_config_of_its_size(monkeypatch):
    calls = []
    monkeypatch.setattr(ex, "run_figure1", lambda cfg, seeds, device: calls.append((cfg, list(seeds), device)))
    ex.figure1_result.cache_clear()
    try:
        ex.figure1_result("default", "cpu")
        ex.figure1_result("tiny", "cpu")
    finally:
        ex.figure1_result.cache_clear()
    assert calls == [(mmcl.SyntheticConfig(), [0, 1, 2, 3, 4], "cpu"),
                     (mmcl.SyntheticConfig().replace(n_epochs=20), [0], "cpu")]


def test_the_figure_module_only_draws():
    assert figs.__all__ == ["draw_sharpest", "FIGURES"]
    from mmcl.figures import figure1  # Figure 1's drawing, in a module of its own

    assert figure1.__all__ == ["draw_figure1"]
    assert not hasattr(figs, "SEEDS")
    assert {spec.chapter for spec in figs.FIGURES} == {figs.CHAPTER} and figs.LABEL == "sec-reading-guide"
