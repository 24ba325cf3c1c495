"""Every command checks that it can write its output folder before it computes: a bad --out costs
nothing and ends with a one-line error naming the option, not a traceback after minutes of work."""
import time

import pytest

from mmcl.cli import main

# a path under /proc cannot be created; each argv would otherwise compute (train, sweep, draw)
BAD = "/proc/mmcl-no-such-folder/out"
COMMANDS = [
    ["coloredmnist", "--seeds", "1", "--out", BAD],
    ["regime", "--n", "100", "--out", BAD],
    ["window", "--n", "100", "--out", BAD],
    ["sweep", "examples/sweep.toml", "--out", BAD],
    ["figure", "stage1-noise-growth", "--out", BAD],
    ["notebooks", "run", "setting", "--out", BAD],
    ["gpu-check", "--tiny", "--device", "cpu", "--out", BAD],
    ["talk", "--size", "tiny", "--out", BAD],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[0])
def test_a_command_refuses_an_unwritable_out_before_computing(argv, capsys, monkeypatch):
    from mmcl._utils import repo_root

    monkeypatch.chdir(repo_root())
    t0 = time.perf_counter()
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "--out" in err and "error" in err and len(err.splitlines()) == 1, err
    assert time.perf_counter() - t0 < 20  # it computed nothing first
