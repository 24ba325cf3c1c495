"""The prepared GPU check (``scripts/gpu_check.sh`` -> ``mmcl gpu-check``): the whole script runs here
at its smallest sizes on the CPU, and its record must have the format below (a schema written here,
independent of the code that writes it, and shown to reject broken records); its options fail
clearly; its pieces (the tests it selects, the chapters it executes, the budget that stops them)
do what they say."""
import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmcl.cli import main
from mmcl.commands import gpu_check as gc

ROOT = Path(__file__).resolve().parent.parent

NUM = "number"  # int or float, never bool
OPT = None  # JSON null allowed

STATS = {"mean": NUM, "min": NUM, "max": NUM, "per_seed": [NUM]}
DIFFS = {"loss": NUM, "gamma": NUM, "rho": NUM}
STEP = {"status": str, "seconds": NUM, "message": str, "results": dict}
SCHEMA = {
    "kind": str, "schema": int, "profile": str, "device": str, "started": str, "finished": str, "complete": bool,
    "budget_s": NUM, "wall_s": NUM, "options": {"out": str, "tiny": bool, "device": str}, "commit": str, "dirty": (bool, OPT), "code_version": str,
    "package_path": str,
    "machine": {"torch": str, "cuda_runtime": (str, OPT), "python": str, "platform": str, "cpus": int,
                "torch_threads": int, "code_path": str, "gpu": (dict, OPT)},
    "steps": {
        "engines": {**STEP, "results": {
            "configs": {"*": {"d": NUM, "n": int, "m": int, "n_epochs": int, "span": bool}},
            "rows": [{"config": str, "mode": str, "engine": str, "seconds": {"*": NUM},
                      "device_vs_cpu_float64": DIFFS, "float32_vs_float64": DIFFS}],
            "max": {"device_vs_cpu_float64": NUM, "float32_vs_float64": NUM, "engine_vs_recursion_float64": NUM}}},
        "speed": {**STEP, "results": {
            "sweep": {"grid": dict, "seeds": int, "cpu_threads": int, "speedup": NUM,
                      "device": {"runs": int, "wall_s": NUM, "runs_per_min": NUM, "wall_s_all": [NUM]},
                      "cpu": {"runs": int, "wall_s": NUM, "runs_per_min": NUM, "wall_s_all": [NUM]}},
            "regime_step": [{"n": int, "mode": str, "dtype": str, "steps": int, "product_ms": NUM, "step_ms": NUM,
                             "run_ms": NUM, "ratio_step": NUM, "ratio_run": NUM}]}},
        "decisive": {**STEP, "results": {"runs": [{
            "n": int, "seeds": int, "seconds": NUM, "wall_s": NUM, "d": NUM, "n_epochs": int, "sec33_ratio": NUM,
            "failing_conditions": [str],
            "modes": {"single": {"loss": STATS, "ood_error": {"sec33": {"adapt": STATS, "transfer": STATS},
                                                              "parallel": {"adapt": STATS, "transfer": STATS}},
                                 "c_ell_T1": [NUM], "failing_conditions": list, "t1_formula": NUM},
                      "multi": {"loss": STATS, "ood_error": {"sec33": {"adapt": STATS, "transfer": STATS},
                                                             "parallel": {"adapt": STATS, "transfer": STATS}},
                                "c_ell_T1": [NUM], "failing_conditions": list, "t1_formula": NUM}},
            "window": {"cos": [NUM], "sec33_cos": NUM, "target": NUM, "seeds": [int],
                       "modes": {"*": {"adapt": {"errors": [[NUM]], "predicted_threshold": (NUM, OPT),
                                                 "measured_threshold": (NUM, OPT)},
                                       "transfer": {"errors": [[NUM]], "predicted_threshold": (NUM, OPT),
                                                    "measured_threshold": (NUM, OPT)}}},
                       "windows": {"adapt": (list, OPT), "transfer": (list, OPT)}}}]}},
        "cuda_tests": {**STEP, "results": {"selected": [str], "passed": int, "failed": int, "skipped": int,
                                           "errors": int, "failures": list}},
        "chapters": {**STEP, "results": {"method": str, "size": str,
                                         "chapters": {"*": {"status": str, "seconds": NUM}}}},
    },
}


def schema_problems(value, spec, where="record"):
    """Every place where ``value`` departs from ``spec``: a type (``NUM`` for a number, ``None`` for
    null, a tuple for several), a dict of required keys (``"*"``: every value) or a one-element list
    (a non-empty list whose every element follows it)."""
    if isinstance(spec, tuple):
        tries = [schema_problems(value, s, where) for s in spec]
        return [] if any(not t for t in tries) else [f"{where}: {value!r:.60} is none of {spec}"]
    if spec is None:
        return [] if value is None else [f"{where}: expected null, got {type(value).__name__}"]
    if spec == NUM:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{where}: expected a number, got {value!r:.60}"]
    if isinstance(spec, type):
        ok = isinstance(value, spec) and not (spec is int and isinstance(value, bool))
        return [] if ok else [f"{where}: expected {spec.__name__}, got {type(value).__name__}"]
    if isinstance(spec, list):
        if not isinstance(value, list) or not value:
            return [f"{where}: expected a non-empty list, got {value!r:.60}"]
        return [p for k, v in enumerate(value) for p in schema_problems(v, spec[0], f"{where}[{k}]")]
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        out = []
        for key, sub in spec.items():
            if key == "*":
                if not value:
                    out.append(f"{where}: expected at least one entry")
                out += [p for k, v in value.items() for p in schema_problems(v, sub, f"{where}.{k}")]
            elif key not in value:
                out.append(f"{where}: missing key {key!r}")
            else:
                out += schema_problems(value[key], sub, f"{where}.{key}")
        return out
    raise AssertionError(f"bad spec at {where}: {spec!r}")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """The whole script, as a lent machine runs it, at --tiny on the CPU."""
    out = tmp_path_factory.mktemp("gpu_check") / "out"
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)  # the script finds the package from its own checkout
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), str(out), "--tiny", "--device", "cpu"],
                          capture_output=True, text=True, env=env, timeout=600)
    return proc, out


def test_the_script_runs_every_step_at_tiny_size_on_the_cpu(tiny_run):
    proc, out = tiny_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["gpu_check.log", "gpu_record.json"]
    rec = json.loads((out / "gpu_record.json").read_text())
    assert (rec["kind"], rec["profile"], rec["device"], rec["schema"]) == ("gpu-check", "tiny", "cpu", gc.SCHEMA)
    assert rec["complete"] and rec["machine"]["gpu"] is None
    assert list(rec["steps"]) == list(gc.STEPS)
    assert {k: s["status"] for k, s in rec["steps"].items()} == {k: "ok" for k in gc.STEPS}, \
        {k: s["message"] for k, s in rec["steps"].items()}
    assert rec["package_path"] == str(ROOT / "mmcl")
    log = (out / "gpu_check.log").read_text()
    for name in gc.STEPS:
        assert f"step {name}: ok" in log
    assert "gpu_check.sh" in log and "summary:" in log


def test_the_record_follows_the_schema(tiny_run):
    rec = json.loads((tiny_run[1] / "gpu_record.json").read_text())
    assert schema_problems(rec, SCHEMA) == []
    # and what the numbers mean
    dec = rec["steps"]["decisive"]["results"]["runs"][0]
    assert dec["n"] == 100 and dec["seeds"] == 2
    for mode in ("single", "multi"):
        for nu in ("sec33", "parallel"):
            for p in ("adapt", "transfer"):
                s = dec["modes"][mode]["ood_error"][nu][p]
                assert len(s["per_seed"]) == 2 and s["min"] <= s["mean"] <= s["max"]
                assert all(0 <= e <= 1 for e in s["per_seed"])
        assert len(dec["modes"][mode]["c_ell_T1"]) == 2
    eng = rec["steps"]["engines"]["results"]
    assert {(r["mode"], r["engine"]) for r in eng["rows"]} == {(m, e) for m in ("single", "multi")
                                                               for e in ("recursion", "gd", "autograd")}
    assert eng["max"]["device_vs_cpu_float64"] == 0.0  # the device is the CPU here
    assert 0 < eng["max"]["float32_vs_float64"] < 1e-3 and eng["max"]["engine_vs_recursion_float64"] < 1e-9
    tests = rec["steps"]["cuda_tests"]["results"]
    assert "tests/test_cuda.py" in tests["selected"]  # its module-level mark names CUDA: all of it
    assert tests["skipped"] >= 1 and tests["failed"] == tests["errors"] == 0
    ch = rec["steps"]["chapters"]["results"]
    from mmcl.figures import registry

    setting = [s.name for s in registry.figures().values() if s.chapter == "setting"]
    assert ch["method"] == "figures" and ch["chapters"]["setting"]["figures"] == setting


def test_the_schema_check_rejects_broken_records(tiny_run):
    rec = json.loads((tiny_run[1] / "gpu_record.json").read_text())
    broken = copy.deepcopy(rec)
    del broken["machine"]["torch"]
    assert any("missing key 'torch'" in p for p in schema_problems(broken, SCHEMA))
    broken = copy.deepcopy(rec)
    broken["steps"]["decisive"]["results"]["runs"][0]["modes"]["multi"]["ood_error"]["sec33"]["adapt"]["mean"] = "0.5"
    assert any("expected a number" in p for p in schema_problems(broken, SCHEMA))
    broken = copy.deepcopy(rec)
    broken["steps"]["speed"]["results"]["regime_step"] = []
    assert any("non-empty list" in p for p in schema_problems(broken, SCHEMA))
    broken = copy.deepcopy(rec)
    broken["complete"] = 1
    assert schema_problems(broken, SCHEMA)


@pytest.mark.parametrize("argv, match", [
    (["--device", "tpu"], "--device"),
    (["--budget", "0"], "--budget"),
    (["--budget", "nan"], "--budget"),
    (["--seeds", "0"], "--seeds"),
    (["--chapters", "99_nothing"], "--chapters"),
    (["--steps", "engines,warp"], "--steps"),
    (["--commit", "not-a-sha"], "--commit"),
])
def test_bad_options_name_the_option(tmp_path, capsys, argv, match):
    with pytest.raises(SystemExit) as exc:
        main(["gpu-check", "--out", str(tmp_path / "o"), "--tiny", *argv])
    assert exc.value.code == 2
    assert match in capsys.readouterr().err
    assert not (tmp_path / "o" / "gpu_record.json").exists()  # refused before any step ran


def test_an_output_folder_that_cannot_be_written_is_refused(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(SystemExit):
        main(["gpu-check", "--out", str(blocker / "sub"), "--tiny"])
    assert "--out" in capsys.readouterr().err


def test_cuda_is_refused_without_a_gpu(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(SystemExit):
        main(["gpu-check", "--out", str(tmp_path), "--tiny", "--device", "cuda"])
    err = capsys.readouterr().err
    assert "--device" in err and "CUDA is not available" in err


def test_the_script_refuses_a_missing_outdir_argument():
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--tiny"], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr


def test_the_tests_it_selects_mention_cuda_and_exclude_this_file(tmp_path):
    ids = gc.cuda_test_ids(ROOT / "tests")
    assert "tests/test_validation.py::test_unknown_mode_engine_device" in ids
    assert "tests/test_cuda.py" in ids
    assert not any("test_gpu_check" in i for i in ids)
    assert "tests/test_engines.py::test_eq7_closed_form_equals_autograd" not in ids
    t = tmp_path / "tests"
    t.mkdir()
    (t / "test_a.py").write_text("import torch\n\ndef test_x():\n    torch.device('CUDA')\n\n"
                                 "def test_y():\n    pass\n\nclass TestZ:\n    def test_w(self):\n        'cuda'\n")
    (t / "test_b.py").write_text("import torch\nGPU = torch.cuda.is_available()\n\ndef test_u():\n    pass\n")
    (t / "test_c.py").write_text("def test_v():\n    pass\n")
    assert gc.cuda_test_ids(t) == ["tests/test_a.py::test_x", "tests/test_a.py::TestZ::test_w", "tests/test_b.py"]


CHAPTER = """---
kernelspec:
  name: python3
---
# A chapter

```{code-cell} ipython3
:tags: [remove-output]
from mmcl.booksupport import chapter_setup
env = chapter_setup(quiet=True)
```

Some text.

```{code-cell} ipython3
---
tags: [hide-input]
---
env.claims.upper("one is at most two", paper="Sec. 3", verdict="observation", observed=1.0, bound=2.0)
```

```{code-cell} ipython3
from IPython.display import HTML, display
display(HTML("<b>shown</b>"))
```

```{code-cell} ipython3
env.claims.upper("three is at most two", paper="Sec. 3", verdict="observation", observed=3.0, bound=2.0)
```

```{code-cell} ipython3
never = 1
```
"""


def test_chapter_cells_are_read_without_their_options(tmp_path):
    md = tmp_path / "ch.md"
    md.write_text(CHAPTER)
    cells = gc.chapter_cells(md)
    assert len(cells) == 5
    assert cells[0].startswith("from mmcl.booksupport import chapter_setup")
    assert cells[1].startswith("env.claims.upper(") and "tags" not in cells[1]
    real = gc.chapter_cells(ROOT / "book" / "setting.md")
    assert len(real) == (ROOT / "book" / "setting.md").read_text().count("```{code-cell}")
    assert not any(c.lstrip().startswith((":tags:", "---")) for c in real)


def test_a_chapter_runs_without_ipython_and_records_its_claims_until_one_fails(tmp_path):
    """The child process of the chapters step, with IPython made unimportable (the GPU image has none)."""
    md = tmp_path / "ch.md"
    md.write_text(CHAPTER)
    blocker = tmp_path / "blocker" / "IPython"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('no IPython here')\n")
    result = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "blocker"), str(ROOT)]),
           "MMCL_FIGURE_DIR": str(tmp_path / "figs"), "MMCL_DEVICE": "cpu", "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "mmcl.commands.gpu_check", "_chapter", str(md), str(result)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    r = json.loads(result.read_text())
    assert r["status"] == "failed" and r["cells"] == 5 and r["cells_run"] == 3
    assert r["message"].startswith("cell 4: ClaimFailed")
    assert [c["claim"] for c in r["claims"]] == ["one is at most two"]
    assert r["verdicts"] == {"observation": 1}


def test_the_budget_stops_a_chapter_and_records_it(tmp_path):
    profile = dataclasses.replace(gc.PROFILES["tiny"], chapters=("setting", "single_stage1"),
                                  chapter_method="notebook", chapter_size="default")
    rec = gc.run_check(tmp_path, profile, device="cpu", budget=2.0, steps=("chapters",))
    step = rec["steps"]["chapters"]
    assert {k: s["status"] for k, s in rec["steps"].items() if k != "chapters"} == \
        {k: "skipped" for k in gc.STEPS if k != "chapters"}
    assert step["status"] == "ok", step["message"]  # the budget, not the code, stopped it
    ch = step["results"]["chapters"]
    assert ch["setting"]["status"] == "timeout" and "budget" in ch["setting"]["message"]
    assert ch["single_stage1"]["status"] == "skipped"
    assert ch["setting"]["seconds"] < 30
    assert json.loads((tmp_path / "gpu_record.json").read_text())["steps"]["chapters"]["status"] == "ok"


def test_a_failing_step_is_recorded_and_the_next_one_runs(tmp_path, monkeypatch):
    def broken(ck, res):
        res["partial"] = 1
        raise RuntimeError("planted failure")

    monkeypatch.setattr(gc, "step_engines", broken)
    rec = gc.run_check(tmp_path, dataclasses.replace(gc.PROFILES["tiny"], chapters=()), device="cpu",
                       steps=("engines", "chapters"))
    e = rec["steps"]["engines"]
    assert e["status"] == "failed" and e["message"] == "RuntimeError: planted failure" and e["results"] == {"partial": 1}
    assert rec["steps"]["chapters"]["status"] == "skipped" and "--chapters none" in rec["steps"]["chapters"]["message"]
    assert rec["complete"]
    assert "planted failure" in (tmp_path / "gpu_check.log").read_text()
