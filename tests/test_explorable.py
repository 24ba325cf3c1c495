"""The window chapter's explorable (mmcl.booksupport.explorable): frames are the seeds' means of the
record's errors at each grid point, and the HTML embeds exactly those frames."""
import json
import re

import pytest

from mmcl.booksupport.explorable import window_frames, window_slider


def _record():
    cos = [0.01, 0.2, 0.6, 1.0]
    modes = {m: {p: {"errors": [[0.5 - 0.1 * k - off, 0.4 - 0.1 * k] for k in range(len(cos))]}
                 for p, off in (("adapt", 0.02), ("transfer", 0.0))}
             for m in ("single", "multi")}
    modes["multi"]["adapt"]["errors"][3] = [0.0, 0.1]
    return {"cos": cos, "sec33_cos": 0.01, "target": 0.25, "modes": modes}


def test_frames_are_the_seeds_means_at_each_grid_point():
    rec = _record()
    frames = window_frames(rec)
    assert [f["cos"] for f in frames] == rec["cos"]
    for k, f in enumerate(frames):
        for key, e in f["errors"].items():
            mode, p = key.split("/")
            vals = rec["modes"][mode][p]["errors"][k]
            assert e == pytest.approx(sum(vals) / len(vals), abs=1e-4)
    assert frames[3]["errors"]["multi/adapt"] == pytest.approx(0.05)


def test_the_html_embeds_the_frames_marks_both_nu_and_needs_no_kernel():
    rec = _record()
    page = window_slider(rec)
    data = re.search(r"<script type='application/json' class='mmcl-frames'>(.*?)</script>", page, flags=re.S)
    assert json.loads(data.group(1)) == window_frames(rec)
    assert "type='range' min='0' max='3'" in page
    assert "Sec. 3.3's &nu; (cos 0.01)" in page and "Figure 1's &nu; (cos 1)" in page
    assert "require(" not in page and "Jupyter" not in page and "IPython" not in page


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="record must be window_json's output, with the key 'cos'"):
        window_frames({"modes": {}})
    with pytest.raises(ValueError, match="start must be a grid index, 0 to 3"):
        window_slider(_record(), start=4)
