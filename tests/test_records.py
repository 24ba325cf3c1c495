"""The reader of the lent machines' records (``mmcl.booksupport.records``), on synthetic records
written in a temporary folder; and the records kept in ``benchmarks/records/`` load and are named
as their README says."""
import json
from pathlib import Path

import pytest

from mmcl.booksupport import records

ROOT = Path(__file__).resolve().parent.parent


def _stats(vals):
    return {"mean": sum(vals) / len(vals), "min": min(vals), "max": max(vals), "per_seed": vals}


def synthetic_record(started="2026-12-01T10:00:00+00:00", commit="0123456789abcdef0123456789abcdef01234567",
                     single=(0.47, 0.49, 0.51), multi=(0.44, 0.46, 0.48)):
    """A record as ``mmcl gpu-check`` writes one on an H200, with made-up numbers."""
    mode = lambda v: {"loss": _stats([0.1, 0.1, 0.1]), "c_ell_T1": [1.2, 1.3, 1.1],  # noqa: E731
                      "ood_error": {nu: {p: _stats(list(v)) for p in ("adapt", "transfer")}
                                    for nu in ("sec33", "parallel")}}
    return {
        "kind": "gpu-check", "schema": 1, "profile": "full", "device": "cuda", "started": started,
        "finished": started, "complete": True, "budget_s": 480.0, "wall_s": 452.0, "argv": [], "commit": commit,
        "dirty": False, "code_version": "f9d31a74d1509a36", "package_path": "/repo/mmcl",
        "machine": {"torch": "2.11.0+cu130", "cuda_runtime": "13.0", "python": "3.12.3", "platform": "Linux",
                    "cpus": 16, "torch_threads": 16, "code_path": "avx512",
                    "gpu": {"name": "NVIDIA H200", "memory_gib": 139.8, "driver": "580.159.04", "capability": "9.0",
                            "multiprocessors": 132, "count": 1}},
        "steps": {
            "engines": {"status": "ok", "seconds": 20.0, "message": "", "results": {
                "max": {"device_vs_cpu_float64": 3.1e-14, "float32_vs_float64": 2.0e-6,
                        "engine_vs_recursion_float64": 4.0e-13}}},
            "speed": {"status": "ok", "seconds": 60.0, "message": "", "results": {
                "sweep": {"speedup": 12.0, "device": {"runs_per_min": 12000.0}, "cpu": {"runs_per_min": 1000.0}},
                "regime_step": [{"n": 10000, "mode": "multi", "dtype": "float64", "ratio_step": 3.5}]}},
            "decisive": {"status": "ok", "seconds": 200.0, "message": "", "results": {"runs": [
                {"n": 9224, "seeds": 3, "wall_s": 95.0, "modes": {"single": mode(single), "multi": mode(multi)},
                 "window": {"windows": {"adapt": [0.2, 1.0], "transfer": None}}}]}},
            "cuda_tests": {"status": "ok", "seconds": 30.0, "message": "40 passed",
                           "results": {"passed": 40, "failed": 0}},
            "chapters": {"status": "ok", "seconds": 140.0, "message": "", "results": {"chapters": {
                "decisive_runs": {"status": "ok", "seconds": 120.0, "verdicts": {"holds": 30, "outside": 4}},
                "theorems_regime": {"status": "timeout", "seconds": 20.0},
                "phase_diagrams": {"status": "skipped", "seconds": 0.0}}}},
        },
    }


def test_without_records_the_reader_says_none_exists_yet(tmp_path):
    assert records.latest_record(folder=tmp_path) is None
    assert records.latest_record(folder=tmp_path / "absent") is None
    text = records.summary(folder=tmp_path)
    assert text == records.NO_RECORD == records.format_record(None)
    assert text.startswith("No GPU record yet") and "scripts/gpu_check.sh" in text


def test_the_newest_record_is_read_and_formatted(tmp_path):
    old = synthetic_record(started="2026-11-01T10:00:00+00:00", commit="1" * 40)
    new = synthetic_record()
    for rec in (old, new):
        (tmp_path / records.record_name(rec)).write_text(json.dumps(rec))
    (tmp_path / "notes.txt").write_text("not a record")
    assert [p.name for p in records.record_paths(folder=tmp_path)] == [
        "gpu-2026-11-01-111111111111.json", "gpu-2026-12-01-0123456789ab.json"]
    assert records.latest_record(folder=tmp_path) == new
    text = records.summary(folder=tmp_path)
    assert text == records.format_record(new)
    for part in ("NVIDIA H200", "driver 580.159.04", "commit 0123456789ab", "torch 2.11.0+cu130", "16 CPUs",
                 "n = 9224, 3 seeds", "sec33/adapt 0.490 [0.470, 0.510]", "parallel/transfer 0.460 [0.440, 0.480]",
                 "adapt [0.200, 1.000]", "transfer empty", "12.0x the CPU", "n = 10000 multi float64 3.5",
                 "3.1e-14", "decisive_runs ok 120 s (30 holds, 4 outside)", "theorems_regime timeout",
                 "not started: 1", "cuda_tests ok 30 s"):
        assert part in text, part
    lines = text.splitlines()
    assert lines[0].startswith("gpu-2026-12-01-0123456789ab: profile full on cuda")
    assert any(ln.strip().startswith("single:") for ln in lines) and any(ln.strip().startswith("multi:") for ln in lines)


def test_a_record_with_missing_fields_still_formats():
    rec = {"kind": "gpu-check", "started": "2026-12-01T00:00:00+00:00", "machine": {}, "steps": {}}
    text = records.format_record(rec)
    assert "no GPU" in text and "commit unknown" in text and "NOT complete" in text
    assert records.record_name(rec) == "gpu-2026-12-01-unknown.json"
    assert records.record_name({**rec, "commit": "abc1234"}) == "gpu-2026-12-01-abc1234.json"
    assert records.record_name({**rec, "commit": "abc1234+dirty"}) == "gpu-2026-12-01-abc1234.json"
    assert records.record_name({**rec, "commit": "../etc"}) == "gpu-2026-12-01-unknown.json"


def test_bad_records_and_arguments_are_refused(tmp_path):
    (tmp_path / "gpu-2026-12-01-broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="gpu-2026-12-01-broken.json"):
        records.latest_record(folder=tmp_path)
    (tmp_path / "gpu-2026-12-01-broken.json").write_text(json.dumps({"kind": "gpu-check"}))
    with pytest.raises(ValueError, match="lacks started, machine, steps"):
        records.latest_record(folder=tmp_path)
    with pytest.raises(ValueError, match="kind='tpu'"):
        records.latest_record("tpu", folder=tmp_path)
    with pytest.raises(ValueError, match="record must be a dict"):
        records.format_record("gpu-2026.json")


def test_the_kept_records_load_and_are_named_as_the_readme_says():
    assert records.records_dir().parts[-2:] == ("benchmarks", "records")
    assert records.records_dir(ROOT) == ROOT
    readme = (ROOT / "benchmarks" / "records" / "README.md").read_text()
    assert "gpu-<date>-<commit>.json" in readme and "scripts/gpu_check.sh" in readme
    for path in records.record_paths(folder=ROOT / "benchmarks" / "records"):
        rec = records.load_record(path)
        assert path.name == records.record_name(rec), path
    # the text the book will show: the newest record, or the sentence saying there is none
    text = records.summary(folder=ROOT / "benchmarks" / "records")
    assert text.startswith("gpu-") or text == records.NO_RECORD
