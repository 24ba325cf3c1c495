"""The CPU code path (mmcl.codepath): what a process runs, how another one is selected in a new
process, and the cache keying every entry by it, so that a run under one code path is never
served to a process under another."""
import subprocess
import sys

import pytest

from mmcl import codepath
from mmcl.cli import main


def _in_new_process(env_path, code):
    import os

    env = {**os.environ, **(codepath.environment(env_path) if env_path else {})}
    if not env_path:
        for v in codepath.ENV_VARS:
            env.pop(v, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_alternative_is_below_the_native_path_and_never_the_same():
    assert codepath.alternative("AVX512") == "avx2"
    assert codepath.alternative("avx512_vnni") == "avx2"
    assert codepath.alternative("AMX") == "avx2"
    assert codepath.alternative("AVX2") == "default"
    assert codepath.alternative("SVE256") == "default"
    with pytest.raises(ValueError, match="no other code path"):
        codepath.alternative("DEFAULT")
    with pytest.raises(ValueError, match="native="):
        codepath.alternative("")
    with pytest.raises(ValueError, match="path='sse' is unknown; valid: 'avx512', 'avx2', 'default'"):
        codepath.environment("sse")


def test_the_environment_selects_the_code_path_of_a_new_process():
    code = "from mmcl.codepath import current; print(current())"
    assert _in_new_process("default", code).startswith("default+")
    native = _in_new_process(None, code)
    assert "+" not in native  # no oneDNN/MKL override in a plain process
    try:
        alt = codepath.alternative(native)
    except ValueError:
        pytest.skip(f"this CPU's native code path {native} has none below it")
    assert _in_new_process(alt, code).split("+")[0] == alt != native


def test_a_cache_entry_is_keyed_by_the_code_path():
    code = "from mmcl.cache import cache_key; print(cache_key('ns', {'a': 1}))"
    keys = {_in_new_process(p, code) for p in (None, "default")}
    assert len(keys) == 2, keys
    assert _in_new_process("default", code) in keys  # and the same path gives the same key


def test_the_command_prints_the_path_and_shell_exports(capsys):
    assert main(["codepath"]) == 0
    assert capsys.readouterr().out.strip() == codepath.current()
    try:
        alt = codepath.alternative()
    except ValueError:
        pytest.skip("no code path below this CPU's native one")
    assert main(["codepath", "--alternative"]) == 0
    out = capsys.readouterr().out
    for k, v in codepath.environment(alt).items():
        assert f"export {k}={v}" in out
