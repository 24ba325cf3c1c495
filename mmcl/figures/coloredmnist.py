"""Figures of the chapter :ref:`ColoredMNIST <sec-coloredmnist>`: Table 1 of the paper and
what its gap depends on, drawing only.

The runs and the data shown are :mod:`mmcl.experiments.coloredmnist.chapter`'s (re-exported by
:mod:`mmcl.experiments.coloredmnist`): :func:`~mmcl.experiments.coloredmnist.chapter.table1_result`
(:func:`mmcl.experiments.coloredmnist.table1.run_table1` over the runs of a size, shared by three
figures) and :func:`~mmcl.experiments.coloredmnist.chapter.samples_data` (the ColoredMNIST of seed 0).
This module draws them: :func:`draw_gap` (the takeaway), :func:`draw_samples`, :func:`draw_table1`, :func:`draw_feature_probes`
and :func:`draw_probe_l2` (each returns the figure; the book's ``env.show`` and ``mmcl coloredmnist`` write it),
and registers the five figures.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

from mmcl._utils import check_int
from mmcl.experiments.coloredmnist.chapter import samples_data, table1_result
from mmcl.experiments.coloredmnist.data import PALETTE_NAMES, ColoredMNIST, ColoredMNISTConfig
from mmcl.experiments.coloredmnist.runs import RUNS
from mmcl.experiments.coloredmnist.table1 import PAPER, Table1Result
from mmcl.figures import palette
from mmcl.figures.registry import FigureSpec, chapter_of
from mmcl.figures.theme import COLORS, style

__all__ = ["LABELS", "RUN_LABELS", "GAP_GROUPS", "gap_bars", "draw_gap", "draw_samples", "draw_table1", "draw_feature_probes", "draw_probe_l2",
           "FIGURES"]

LABEL = "sec-coloredmnist"
CHAPTER = chapter_of(__name__)


# ---------------------------------------------------------------------------------------------
# drawing
# ---------------------------------------------------------------------------------------------

#: Display names of the variants (and of the paper's two rows).
LABELS = {
    "multi_zero_shot": "multi-modal, zero-shot", "multi_linear_probe": "multi-modal, linear probe",
    "single_crop_flip": "SimCLR crop+flip", "single_color_jitter": "SimCLR +jitter+grey",
    "supervised": "supervised (CE)", "shape_only": "ref: shape only", "colour_only": "ref: colour only",
    "multi_digit_caption_zero_shot": "multi, digit caption, 0-shot",
    "multi_digit_caption_linear_probe": "multi, digit caption, probe",
    "single_grayscale_only": "SimCLR +grey only", "single_strong_jitter": "SimCLR +jitter s=1",
    "single_small_crops": "SimCLR small crops",
    "paper_single": "paper: single-modal", "paper_multi": "paper: multi-modal",
}

#: Display names of the runs.
RUN_LABELS = {
    "multi": "multi-modal", "single_crop_flip": "SimCLR crop+flip", "single_color_jitter": "SimCLR +jitter+grey",
    "supervised": "supervised", "shape_only": "shape only (grey)", "multi_digit_caption": "multi, digit caption",
    "single_grayscale_only": "SimCLR +grey only", "single_strong_jitter": "SimCLR +jitter s=1",
    "single_small_crops": "SimCLR small crops",
}


def _colour_of(name: str) -> str:
    if name.startswith("paper"):
        return COLORS["reference"]
    if name.startswith("multi"):
        return COLORS["multi"]
    if name.startswith("single"):
        return COLORS["single"]
    if name in ("shape_only", "colour_only"):
        return palette.FAINT
    return COLORS["accent"]


#: The comparisons of :func:`draw_gap`: (label, multi-modal variant, single-modal variant).
GAP_GROUPS = (
    ("zero-shot vs\nSimCLR crop+flip", "multi_zero_shot", "single_crop_flip"),
    ("linear probe vs\nSimCLR crop+flip", "multi_linear_probe", "single_crop_flip"),
    ("linear probe vs\nSimCLR +jitter+grey", "multi_linear_probe", "single_color_jitter"),
)


def gap_bars(result: Table1Result):
    """The bars of :func:`draw_gap`: ``(label, multi, single)`` test accuracies (fractions, mean
    over seeds), the paper's Table 1 first, then each comparison of :data:`GAP_GROUPS` whose two
    variants the result holds."""
    s = result.summary()
    bars = [("paper,\nTable 1", PAPER["multi"]["test"], PAPER["single"]["test"])]
    bars += [(label, s[m]["test"]["mean"], s[v]["test"]["mean"]) for label, m, v in GAP_GROUPS
             if m in s and v in s]
    return bars


def draw_gap(result: Table1Result):
    """The takeaway: reversed-colour test accuracy, multi-modal (blue) against single-modal
    (vermilion), for the paper's Table 1 (open bars) and for our runs under the paper's protocol
    (zero-shot against SimCLR with crop and flip) and under the same linear probe for both, with
    and without colour jitter; the gap in points above each pair.  Returns the figure."""
    import matplotlib.pyplot as plt

    from matplotlib.patches import Patch

    bars = gap_bars(result)
    with style():
        fig, ax = plt.subplots(figsize=(7.5, 4.2))
        w = 0.38
        for k, (label, m, v) in enumerate(bars):
            paper = k == 0
            for dx, val, mode in ((-w / 2, m, "multi"), (w / 2, v, "single")):
                ax.bar(k + dx, 100 * val, w, color=palette.BACKGROUND if paper else COLORS[mode],
                       edgecolor=COLORS[mode], lw=2, hatch="//" if paper else None,
                       label=None if k != 1 else f"{mode}-modal")
            ax.text(k, 100 * max(m, v) + 3, f"gap {100 * (m - v):.0f} pts", ha="center")
        ax.axhline(10, color=COLORS["reference"], ls=":", lw=1.2)
        ax.set_xticks(range(len(bars)), [b[0] for b in bars])
        ax.set_ylim(0, 114)  # room for the legend above the bars
        ax.set_yticks(range(0, 101, 20))
        ax.set_ylabel("test accuracy, colours reversed (%)")
        ax.set_title("ColoredMNIST: the gap depends on how it is measured")
        handles, labels = ax.get_legend_handles_labels()
        handles.append(Patch(facecolor=palette.BACKGROUND, edgecolor=COLORS["reference"], hatch="//"))
        ax.legend(handles, labels + ["the paper"], loc="upper right", ncols=3)
        ax.grid(axis="x", visible=False)
    return fig


def draw_table1(result: Table1Result):
    """Horizontal bars of train (light) and test (OOD, dark) accuracy per variant, mean +- 1 s.d.
    over seeds, under the paper's two rows.  Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    s = result.summary()
    rows = [("paper_multi", PAPER["multi"]["train"], 0, PAPER["multi"]["test"], 0),
            ("paper_single", PAPER["single"]["train"], 0, PAPER["single"]["test"], 0)]
    rows += [(v, m["train"]["mean"], m["train"]["sd"], m["test"]["mean"], m["test"]["sd"]) for v, m in s.items()]
    with style():
        fig, ax = plt.subplots(figsize=(7.8, 0.5 * len(rows) + 1.6))
        y = torch.arange(len(rows), dtype=torch.float64).flip(0).tolist()
        h = 0.38
        for yi, (v, tr, trs, te, tes) in zip(y, rows):
            c = _colour_of(v)
            ax.barh(yi + h / 2, 100 * tr, h, xerr=100 * trs or None, color=c, alpha=0.35, ecolor=palette.DARK)
            ax.barh(yi - h / 2, 100 * te, h, xerr=100 * tes or None, color=c, ecolor=palette.DARK)
            ax.text(100 * te + 1.5 + 100 * tes, yi - h / 2, f"{100 * te:.1f}", va="center", fontsize=10)
        ax.set_yticks(y, [LABELS.get(r[0], r[0]) for r in rows])
        ax.axvline(10, color=palette.MID, ls=":", lw=1.2)
        ceiling = 1 - ColoredMNISTConfig(**result.settings["data"]).effective_label_noise
        ax.axvline(100 * ceiling, color=palette.MID, ls="--", lw=1.2)
        ax.set_xlim(0, 108)
        ax.set_xlabel("accuracy on the splits' noisy labels (%)")
        n = len(result.seeds)
        fig.legend(handles=[Patch(color=palette.DARK, alpha=0.35, label="train (colour agrees with label)"),
                            Patch(color=palette.DARK, label=f"test (colour reversed){'' if n == 1 else ', mean ± s.d.'}"),
                            Line2D([], [], color=palette.MID, ls=":", label="chance"),
                            Line2D([], [], color=palette.MID, ls="--", label="label-noise ceiling")],
                   loc="outside upper center", ncol=2)
        ax.grid(axis="y", visible=False)
    return fig


def draw_feature_probes(result: Table1Result):
    """What each model's frozen features encode: accuracy of a linear digit probe and of a linear
    colour probe, on images re-coloured independently of the digit (chance 10 %).  Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ps = result.probe_summary()
    runs = list(ps)
    with style():
        fig, ax = plt.subplots(figsize=(7.8, 4.4))
        x = torch.arange(len(runs), dtype=torch.float64)
        w = 0.38
        for k, (key, hatch, lab) in enumerate((("digit", "", "digit probe"), ("colour", "//", "colour probe"))):
            m = [100 * ps[r][key]["mean"] for r in runs]
            sd = [100 * ps[r][key]["sd"] for r in runs]
            ax.bar((x + (k - 0.5) * w).tolist(), m, w, yerr=sd if len(result.seeds) > 1 else None,
                   color=[_colour_of(r) for r in runs], alpha=1.0 if key == "digit" else 0.45,
                   hatch=hatch, edgecolor=palette.BACKGROUND, label=lab)
        ax.axhline(10, color=palette.MID, ls=":", lw=1.2)
        ax.set_xticks(x.tolist(), [RUN_LABELS.get(r, r) for r in runs], rotation=25, ha="right")
        ax.set_ylabel("probe accuracy (%)")
        ax.set_ylim(0, 102)
        fig.legend(handles=[Patch(color=palette.DARK, label="digit probe"),
                            Patch(facecolor=palette.DARK, alpha=0.45, hatch="//", edgecolor=palette.BACKGROUND, label="colour probe"),
                            Line2D([], [], color=palette.MID, ls=":", label="chance")],
                   loc="outside upper center", ncol=3)
        ax.grid(axis="x", visible=False)
    return fig


def draw_samples(data: ColoredMNIST, n_per_split: int = 10):
    """The first digit of each label in both splits, with label and colour name: the reversal seen.
    Column ``k`` shows label ``k % 10``; every label must occur in both splits.  Returns the figure."""
    import matplotlib.pyplot as plt

    check_int("n_per_split", n_per_split)
    for title, sp in (("train", data.train), ("test", data.test)):
        missing = sorted({k % 10 for k in range(n_per_split)} - set(sp.label.tolist()))
        if missing:
            raise ValueError(f"data: the {title} split has no digit labelled {missing}; use more images")
    tiles, names = [], []
    for title, sp in (("train", data.train), ("test", data.test)):
        row = []
        for k in range(n_per_split):
            idx = torch.nonzero(sp.label == k % 10)[0]
            img = sp.images(idx)[0].permute(1, 2, 0).clamp(0, 1)
            pad = torch.ones(img.shape[0], max(1, img.shape[1] // 7), 3)  # a white gutter
            row += [img, pad]
            names.append((k, title, PALETTE_NAMES[int(sp.colour[idx])]))
        tiles.append(torch.cat(row[:-1], dim=1))
    gap = torch.ones(max(1, tiles[0].shape[0] // 2), tiles[0].shape[1], 3)
    mosaic = torch.cat([tiles[0], gap, tiles[1]], dim=0)
    size = tiles[0].shape[0]
    step = size + max(1, size // 7)
    with style():
        fig, ax = plt.subplots(figsize=(7.5, 2.6))
        ax.imshow(mosaic.numpy(), interpolation="nearest")
        ax.set_xticks([k * step + size / 2 - 0.5 for k in range(n_per_split)],
                      [str(k % 10) for k in range(n_per_split)])
        ax.xaxis.tick_top()
        ax.set_yticks([size / 2 - 0.5, size + gap.shape[0] + size / 2 - 0.5], ["train", "test"])
        ax.tick_params(length=0)
        ax.grid(False)
        for sp_ in ax.spines.values():
            sp_.set_visible(False)
        for k, title, colour in names:
            y0 = size - 0.5 if title == "train" else 2 * size + gap.shape[0] - 0.5
            ax.text(k * step + size / 2 - 0.5, y0 + 0.3, colour, ha="center", va="top", fontsize=7)
    return fig


def draw_probe_l2(result: Table1Result,
                  runs: Optional[Sequence[str]] = None):
    """Test (OOD) accuracy of each run's linear probe against the probe's L2 penalty
    (:data:`~mmcl.experiments.coloredmnist.runs.PROBE_L2_GRID`), mean over seeds, for ``runs``
    (default: those of ``RUNS`` with a probe); the multi-modal zero-shot score, which has no
    penalty, as a horizontal line.  Returns the figure."""
    import matplotlib.pyplot as plt

    sweep = result.probe_l2_summary()
    runs = [r for r in (RUNS if runs is None else runs) if r in sweep]
    sweep = {r: sweep[r] for r in runs}
    s = result.summary()
    with style():
        fig, ax = plt.subplots(figsize=(7.5, 4.4))
        markers = "osD^vP*X"
        for k, (run, d) in enumerate(sweep.items()):
            l2s = sorted(d)
            ax.plot(l2s, [100 * d[l2]["test"]["mean"] for l2 in l2s], marker=markers[k % len(markers)],
                    color=_colour_of(run), ls="-" if k % 2 == 0 else "--",
                    label=RUN_LABELS.get(run, run) + (", linear probe" if run.startswith("multi") else ""))
        if "multi_zero_shot" in s:
            ax.axhline(100 * s["multi_zero_shot"]["test"]["mean"], color=COLORS["multi"], lw=1.5, ls=":",
                       label="multi-modal, zero-shot")
        ax.set_xscale("log")
        ax.set_xlabel("L2 penalty of the linear probe")
        ax.set_ylabel("test accuracy, colour reversed (%)")
        ax.set_ylim(0, 100)
        fig.legend(loc="outside right center", fontsize=10)
    return fig


# ---------------------------------------------------------------------------------------------
# the registry
# ---------------------------------------------------------------------------------------------

def _samples(size, device):
    return draw_samples(samples_data(size))


def _gap(size, device):
    return draw_gap(table1_result(size, device))


def _table1(size, device):
    return draw_table1(table1_result(size, device))


def _feature_probes(size, device):
    return draw_feature_probes(table1_result(size, device))


def _probe_l2(size, device):
    return draw_probe_l2(table1_result(size, device))


FIGURES = [
    FigureSpec("coloredmnist-gap", "ColoredMNIST: reversed-colour test accuracy, multi-modal against single-modal, "
               "in the paper's Table 1, under the paper's protocol (zero-shot against SimCLR with crop and flip) and "
               "under the same linear probe for both, with and without colour jitter", CHAPTER, LABEL, _gap,
               takeaway=True),
    FigureSpec("coloredmnist-samples", "ColoredMNIST (Table 1): the first digit of each label in the training split "
               "(colour agrees with the label 77.5 % of the time) and in the test split (colours of paired classes "
               "swapped), 14 × 14 px", CHAPTER, LABEL, _samples),
    FigureSpec("table1-coloredmnist", "Table 1 of the paper beside every ColoredMNIST variant: train and "
               "reversed-colour test accuracy of multi-modal (zero-shot, linear probe), SimCLR (crop + flip, + colour "
               "jitter + grayscale), supervised, the shape-only and colour-only references and the ablations",
               CHAPTER, LABEL, _table1),
    FigureSpec("coloredmnist-feature-probes", "What each ColoredMNIST model's features encode: accuracy of a linear "
               "digit probe and a linear colour probe on images re-coloured independently of the digit",
               CHAPTER, LABEL, _feature_probes),
    FigureSpec("coloredmnist-probe-l2", "ColoredMNIST: reversed-colour test accuracy of each model's linear probe "
               "against the probe's L2 penalty, with the multi-modal zero-shot score for reference",
               CHAPTER, LABEL, _probe_l2),
]
