"""The window chapter's explorable: a slider over ``cos(nu, mu)`` that shows, at each angle of the
window experiment's grid, the OOD errors of both modes under both heads.

Static HTML and JavaScript: the frames (one per grid point, the errors averaged over seeds) are
computed here, in Python, from :func:`mmcl.experiments.window.window_json`'s record and embedded
in the page as JSON; moving the slider only looks a frame up, so the page needs no kernel.  The
scale marks where Sec. 3.3's ``nu`` (the grid's first angle, ``sec33_cos``) and the paper's
Figure 1 ``nu`` (parallel to ``mu``, ``cos = 1``) sit.

Public: :func:`window_frames` and :func:`window_slider`.
"""
from __future__ import annotations

import html
import json
import uuid
from typing import Dict, List, Mapping

__all__ = ["window_frames", "window_slider"]

MODES = ("single", "multi")
PROTOCOLS = ("adapt", "transfer")
_PROTOCOL_TEXT = {"adapt": "adapt head (refit on the test data)", "transfer": "transfer head (kept from training)"}


def window_frames(record: Mapping) -> List[Dict]:
    """One frame per angle of ``record["cos"]``: ``{"cos": c, "errors": {"single/adapt": e, ...}}``,
    each error the mean over seeds (rounded to 4 decimals), for every mode and protocol the record
    holds.  ``record`` is :func:`mmcl.experiments.window.window_json`'s output."""
    for key in ("cos", "modes"):
        if key not in record:
            raise ValueError(f"record must be window_json's output, with the key {key!r}; got keys {sorted(record)}")
    frames = []
    for k, c in enumerate(record["cos"]):
        errors = {}
        for mode in MODES:
            for p in PROTOCOLS:
                per_seed = record["modes"].get(mode, {}).get(p, {}).get("errors")
                if per_seed is not None:
                    vals = per_seed[k]
                    errors[f"{mode}/{p}"] = round(sum(vals) / len(vals), 4)
        frames.append({"cos": float(c), "errors": errors})
    return frames


_SCRIPT = """
(function () {
  const root = document.getElementById(%(id)s);
  if (!root) return;
  const frames = JSON.parse(root.querySelector('script.mmcl-frames').textContent);
  const input = root.querySelector('input[type=range]');
  function show() {
    const f = frames[Number(input.value)];
    root.querySelector('.mmcl-cos').textContent = f.cos >= 0.1 ? f.cos.toFixed(3) : f.cos.toPrecision(3);
    for (const cell of root.querySelectorAll('[data-key]')) {
      const e = f.errors[cell.dataset.key];
      cell.textContent = e === undefined ? '\\u2013' : e.toFixed(3);
      cell.classList.toggle('mmcl-small', e !== undefined && e < %(target)s);
    }
  }
  input.addEventListener('input', show);
  show();
})();
"""


def window_slider(record: Mapping, start: int = 0) -> str:
    """The explorable's HTML (a ``<div class="mmcl-explorable">`` with its frames, a range input over
    the grid's indices, a table of the four errors and an inline script), for
    ``IPython.display.HTML``.  ``start`` is the grid index shown first."""
    frames = window_frames(record)
    if not 0 <= start < len(frames):
        raise ValueError(f"start must be a grid index, 0 to {len(frames) - 1}; got {start}")
    target = float(record.get("target", 0.25))
    sec33 = float(record.get("sec33_cos", frames[0]["cos"]))
    last = len(frames) - 1
    # where the two nu sit on the scale: the grid indices closest to each
    i33 = min(range(len(frames)), key=lambda k: abs(frames[k]["cos"] - sec33))
    i1 = min(range(len(frames)), key=lambda k: abs(frames[k]["cos"] - 1.0))
    box = "mmcl-explorable-" + uuid.uuid4().hex[:8]
    ticks = "".join(f"<option value='{k}'></option>" for k in range(len(frames)))
    marks = (f"<div class='mmcl-marks'><span style='left:{100 * i33 / max(last, 1):.2f}%'>&#9650; Sec. 3.3's &nu; "
             f"(cos {sec33:.3g})</span><span style='left:{100 * i1 / max(last, 1):.2f}%'>Figure 1's &nu; (cos 1) "
             "&#9650;</span></div>")
    head = "".join(f"<th>{m}-modal</th>" for m in MODES)
    body = "".join(f"<tr><td>{html.escape(_PROTOCOL_TEXT[p])}</td>"
                   + "".join(f"<td data-key='{m}/{p}'></td>" for m in MODES) + "</tr>" for p in PROTOCOLS)
    data = json.dumps(frames).replace("</", "<\\/")
    script = _SCRIPT % {"id": json.dumps(box), "target": repr(target)}
    return (f"<div class='mmcl-explorable' id='{box}'>"
            f"<script type='application/json' class='mmcl-frames'>{data}</script>"
            f"<p class='mmcl-explorable-angle'>cos(&nu;, &mu;) = <b class='mmcl-cos'></b></p>"
            f"<input type='range' min='0' max='{last}' step='1' value='{start}' list='{box}-ticks' "
            f"aria-label='cos(nu, mu): index of the grid'><datalist id='{box}-ticks'>{ticks}</datalist>"
            f"{marks}<table class='mmcl-explorable-errors'><thead><tr><th>OOD error (mean over seeds)</th>{head}"
            f"</tr></thead><tbody>{body}</tbody></table>"
            f"<p class='mmcl-explorable-note'>In bold: an error below {target:g}. The grid is the window "
            f"experiment's {len(frames)} angles; the slider steps through them.</p>"
            f"<script>{script}</script></div>")
