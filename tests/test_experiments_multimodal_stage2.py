"""The summaries :mod:`mmcl.experiments.multimodal_stage2` hands its chapter, checked against the
chain they summarise (tiny size: one seed, 110 steps, stage 2 from T1 = 87)."""
import pytest

from mmcl.experiments import multimodal_stage2 as experiment


@pytest.fixture(scope="module")
def tiny():
    return experiment.stage2_run("tiny"), experiment.chains("tiny"), experiment.one_step("tiny")


def test_one_step_reads_lemma_d14_off_the_chain(tiny):
    run, ch, verdicts = tiny
    assert list(verdicts) == ["paper's signs", "signs at T1"]
    for chain, v in zip((ch.paper, ch.at_t1), verdicts.values()):
        slack = chain.slack[:, run.t1:]
        steps = slack.numel()
        assert v.both == pytest.approx(sum(float(x) >= 0 for x in slack.flatten()) / steps)
        assert v.seeds == slack.shape[0] == 1
        assert v.seeds_holding + v.seeds_failing <= v.seeds
        assert v.seeds_holding == int(bool((slack >= 0).all()))
        first = chain.slack_first[:, run.t1:]
        assert v.first == pytest.approx(sum(float(x) >= 0 for x in first.flatten()) / first.numel())
        # the factor that makes the first network's inequality hold: at it, the slack is >= 0
        lam = v.factor_first * run.cfg.tau * chain.level
        assert float(chain.telescoping.first.c17_slack(lam)[..., run.t1:].min()) >= -1e-9
        assert float(chain.telescoping.first.c17_slack(0.99 * lam)[..., run.t1:].min()) < 0
    text = str(verdicts["signs at T1"])
    assert "Lemma D.14, signs at T1" in text and "each network alone" in text
