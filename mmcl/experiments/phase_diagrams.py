"""The experiment of the chapter :ref:`Phase diagrams <sec-phase-diagrams>`: its sizes, its
base configuration, its cached runs and the closed-form race's boundaries on its grids.  The
studies themselves (grids, seeds, options per size) are defined in
:mod:`mmcl.experiments.sweep.studies`; the drawings are in :mod:`mmcl.figures.phase_diagrams`.

* :func:`sizes` -- what each size of :data:`~mmcl.experiments.sizes.SIZES` means here
  (:class:`~mmcl.experiments.sweep.studies.StudySizes`, one per size in ``BY_SIZE``);
* :func:`config` -- the configuration every study starts from (Figure 1's setting, 500 fresh
  OOD samples); :func:`study_seeds` and :func:`study_grid` -- a study's seeds and grid;
* :func:`study_table` -- a study's table, computed once per ``(study, size, device)`` (the
  figures and the chapter share it), and :func:`t1_tables` -- the four phase-diagram studies by
  their label in the ``T1`` figure; :func:`run_agreement` -- the engines checked against each
  other on a sample of the ``n x SNR`` grid; :func:`summarise_view` -- the denoised-view study's
  seed means;
* the closed-form race of stage 1 (:func:`mmcl.proofs.predictions.stage1_race`) on the studies'
  grids: :func:`race_config` (a grid point with the race variable set), :func:`race_boundary`
  (the variable's value where the winner switches, by bisection) and :func:`race_overlay` (the
  boundaries over a grid's ``n``, which the collapse and ``C_mu`` figures draw);
* the same race with the noise's side measured on the mode that carries the similarity margin
  (:func:`mmcl.proofs.predictions.linearised_noise_margin`): :func:`margin_race_noise_step` (the
  step at which the iterated linearised map puts ``tau log M`` into the mean noise margin, on a
  draw of the setting) and :func:`margin_race_boundary` (the race variable at which the
  closed-form signal step meets it);
* the race against the runs: :func:`race_vs_runs` (the closed form's predicted winner of every
  run against the feature the run ended stage 1 with) and :func:`margin_race_vs_runs` (the same
  with the noise step on the margin's modes).

Public: every name in ``__all__``.
"""
from __future__ import annotations

import functools
import math
from typing import Dict

from mmcl._utils import check_number
from mmcl.experiments.sweep.grid import expand_grid
from mmcl.experiments.sweep.studies import (BY_SIZE, MODES, STUDIES, StudySizes, ViewSummary, run_agreement, run_study,
                                            sizes, study_base, study_grid, study_seeds, summarise_view)
from mmcl.experiments.sweep.table import SweepTable
from mmcl.model.config import SyntheticConfig
from mmcl.model.data import sample_synthetic
from mmcl.proofs.predictions import Stage1Race, linearised_noise_margin, stage1_race

__all__ = ["StudySizes", "BY_SIZE", "sizes", "config", "MODES", "STUDIES", "study_seeds", "study_grid", "study_table",
           "t1_tables", "run_agreement", "ViewSummary", "summarise_view", "race_config", "race_boundary",
           "race_overlay", "margin_race_noise_step", "margin_race_boundary", "race_vs_runs",
           "margin_race_vs_runs", "race", "n_snr_grid", "n_snr_curves", "cmu_grid", "d_n_grids", "aug_grids", "view_summary"]


def config(size: str = "default") -> SyntheticConfig:
    """The configuration every study starts from (:func:`~mmcl.experiments.sweep.studies.study_base`):
    Figure 1's setting (Sec. 6) scored on 500 fresh OOD samples; ``"tiny"`` trains 20 epochs."""
    return study_base(size)


# --------------------------------------------------------------------------------------------
# The runs the figures and the chapter share
# --------------------------------------------------------------------------------------------
# The labels of the four phase-diagram studies in the T1 figure, in the chapter's order (TeX for matplotlib:
# private, so that the API page does not print its raw TeX).
_T1_LABELS = {"n_snr": r"$n \times$ SNR", "cmu": r"$C_\mu$", "d_n": r"$d \times n$",
              "aug_tau": r"$\sigma_\epsilon \times \tau$"}


@functools.lru_cache(maxsize=32)
def study_table(name: str, size: str = "default", device: str = "cpu") -> SweepTable:
    """The table of the chapter's study ``name`` at ``size``
    (:func:`mmcl.experiments.sweep.studies.run_study`), computed once per ``(name, size, device)``."""
    return run_study(name, size, device)


def t1_tables(size: str = "default", device: str = "cpu") -> Dict[str, SweepTable]:
    """The tables of the four phase-diagram studies, by their label in the ``T1`` figure."""
    return {label: study_table(name, size, device) for name, label in _T1_LABELS.items()}


# --------------------------------------------------------------------------------------------
# The closed-form race of stage 1 on the studies' grids
# --------------------------------------------------------------------------------------------
#: The variable whose race boundary :func:`race_boundary` solves for, per study.
_RACE_VARIABLE = {"n_snr": "n_snr2", "cmu": "c_mu"}
_RACE_BRACKET = (0.05, 20.0)


def race_config(study: str, n: int, value: float, size: str = "default") -> SyntheticConfig:
    """The config of the study's grid point at sample size ``n`` with its race variable at
    ``value``: ``n SNR^2`` for ``"n_snr"`` (the SNR set from it, ``C_mu`` as in the grid),
    ``C_mu`` for ``"cmu"`` (``n SNR^2`` as in the grid); every other parameter as
    :func:`mmcl.experiments.sweep.studies.study_grid` gives it (e.g. ``M = ceil(0.9 n/2)``)."""
    if study not in _RACE_VARIABLE:
        raise ValueError(f"study={study!r} has no race boundary; valid: {sorted(_RACE_VARIABLE)}")
    grid = {k: v for k, v in study_grid(study, size).items() if k not in ("snr", "n_snr2")}
    if study == "cmu":
        grid["n_snr2"] = study_grid(study, size)["n_snr2"]
    grid.update(n=[n], **{_RACE_VARIABLE[study]: [value]})
    return expand_grid(grid, [0], "single", study_base(size))[0].cfg


def race_boundary(study: str, n: int, mode: str, size: str = "default", *, tol: float = 1e-6) -> float:
    """The value of the study's race variable (:func:`race_config`) at which the winner of
    :func:`mmcl.proofs.predictions.stage1_race` switches from the noise to the signal, at sample
    size ``n``: bisection on the log of the variable within ``(0.05, 20)``, cut where the signal
    rate would reach 0.9 (the linear stage needs rates below 1); ``nan`` if the winner does not
    switch there (single-modal learning in the ``"cmu"`` study, which never sees ``C_mu``)."""
    check_number("tol", tol, 0, 0.1, low_closed=False)

    def race(v):
        return stage1_race(race_config(study, n, v, size), mode)

    lo, hi = _RACE_BRACKET
    hi = min(hi, lo * 0.9 / race(lo).signal_rate)  # the signal rate is linear in the variable
    if hi <= lo or race(lo).winner == "signal" or race(hi).winner == "noise":
        return float("nan")
    while math.log(hi / lo) > tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if race(mid).winner == "signal" else (mid, hi)
    return math.sqrt(lo * hi)


def race_overlay(study: str, size: str = "default") -> Dict[str, Dict[int, float]]:
    """The predicted race boundaries on the grid of ``study`` (``"n_snr"`` or ``"cmu"``) at
    ``size``: ``{mode: {n: boundary}}`` over the grid's ``n`` (:func:`race_boundary`), for both
    modes in ``"n_snr"`` and for the multi-modal mode in ``"cmu"``; what
    :func:`mmcl.figures.phase_diagrams.draw_n_snr_collapse` and
    :func:`mmcl.figures.phase_diagrams.draw_cmu` take as ``overlay``."""
    if study not in _RACE_VARIABLE:
        raise ValueError(f"study={study!r} has no race boundary; valid: {sorted(_RACE_VARIABLE)}")
    modes = MODES if study == "n_snr" else ("multi",)
    return {mode: {n: race_boundary(study, n, mode, size) for n in study_grid(study, size)["n"]} for mode in modes}


# --------------------------------------------------------------------------------------------
# The race with the noise's side on the margin's own modes (the iterated linearised map)
# --------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _margin_step(cfg: SyntheticConfig, mode: str, seed: int) -> int:
    return linearised_noise_margin(cfg, mode, sample_synthetic(cfg, seed, with_ood=False)).step


def margin_race_noise_step(cfg: SyntheticConfig, mode: str, seed: int = 0) -> int:
    """The step at which the noise reaches the race's finish line when its side is measured on the
    modes that carry the similarity margin: :func:`mmcl.proofs.predictions.linearised_noise_margin`
    on the explicit draw ``seed`` of ``cfg`` (:func:`mmcl.model.data.sample_synthetic`).  The noise
    map never sees the signal, and a draw's noise and initial weights do not depend on ``||mu||``,
    ``||mu~||``: the result is computed once per setting without them (so once per ``n`` and seed on
    the ``n x SNR`` and ``C_mu`` grids)."""
    return _margin_step(cfg.replace(mu_norm=1.0, mu_tilde_norm=1.0), mode, seed)


def margin_race_boundary(study: str, n: int, mode: str, size: str = "default", *, seed: int = 0,
                         tol: float = 1e-6) -> float:
    """The value of the study's race variable (:func:`race_config`) at which the closed-form
    signal step of :func:`mmcl.proofs.predictions.stage1_race` falls below
    :func:`margin_race_noise_step` (draw ``seed``): the boundary of the race whose noise side is
    measured on the margin's own modes, by bisection as in :func:`race_boundary`; ``nan`` if the
    winner does not switch within ``(0.05, 20)``."""
    check_number("tol", tol, 0, 0.1, low_closed=False)
    if study not in _RACE_VARIABLE:
        raise ValueError(f"study={study!r} has no race boundary; valid: {sorted(_RACE_VARIABLE)}")
    lo, hi = _RACE_BRACKET
    noise = margin_race_noise_step(race_config(study, n, lo, size), mode, seed)

    def signal_wins(v):
        return stage1_race(race_config(study, n, v, size), mode).signal_step < noise

    hi = min(hi, lo * 0.9 / stage1_race(race_config(study, n, lo, size), mode).signal_rate)
    if hi <= lo or signal_wins(lo) or not signal_wins(hi):
        return float("nan")
    while math.log(hi / lo) > tol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if signal_wins(mid) else (mid, hi)
    return math.sqrt(lo * hi)


# The race against the runs: which feature each run ended stage 1 with
# --------------------------------------------------------------------------------------------
def _measured_winner(row, mode: str) -> str:
    """The feature a run ended stage 1 with: the lemma's feature (noise for single-modal, signal
    for multi-modal learning) when its measured ``T1`` exists, the other one otherwise."""
    lemma = "noise" if mode == "single" else "signal"
    return lemma if math.isfinite(row["t1"]) else ("signal" if lemma == "noise" else "noise")


def race_vs_runs(table: SweepTable, mode: str) -> Dict[str, object]:
    """The closed-form race (:func:`mmcl.proofs.predictions.stage1_race`) against every
    non-diverged run of ``mode`` in ``table``: ``runs`` and ``agree`` (counts); ``miss``, one
    ``(n, C_mu, n SNR^2, later/earlier predicted step)`` per disagreement; ``signal`` and
    ``noise``, one ``(max gamma, max rho, OOD accuracy)`` per run on each side of the prediction;
    and ``t1_over_t``, the measured ``T1`` over the predicted step where both name the lemma's
    feature."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: {MODES}")
    lemma = "noise" if mode == "single" else "signal"
    out = {"agree": 0, "runs": 0, "miss": [], "signal": [], "noise": [], "t1_over_t": []}
    for r, c in zip(table.rows, table.configs):
        if r["mode"] != mode or r["diverged"]:
            continue
        p = stage1_race(c, mode)
        measured = _measured_winner(r, mode)
        out["runs"] += 1
        out["agree"] += measured == p.winner
        if measured != p.winner:
            steps = (p.signal_step, p.noise_step)
            out["miss"].append((c.n, c.c_mu, round(c.n_snr2, 2), max(steps) / min(steps)))
        out[p.winner].append((r["max_gamma"], r["max_rho"], r["acc_adapt"]))
        if math.isfinite(r["t1"]) and p.winner == lemma:
            step = p.noise_step if lemma == "noise" else p.signal_step
            out["t1_over_t"].append(r["t1"] / step)
    return out


def margin_race_vs_runs(table: SweepTable, mode: str):
    """The race with its noise step measured on the margin's modes
    (:func:`margin_race_noise_step`, the run's own seed) against every non-diverged run of
    ``mode``: ``(agree, runs, miss)``, ``miss`` one ``(n, C_mu)`` per disagreement."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is unknown; valid: {MODES}")
    agree, runs, miss = 0, 0, []
    for r, c in zip(table.rows, table.configs):
        if r["mode"] != mode or r["diverged"]:
            continue
        noise = margin_race_noise_step(c, mode, r["seed"])
        winner = "signal" if stage1_race(c, mode).signal_step < noise else "noise"
        runs += 1
        agree += winner == _measured_winner(r, mode)
        if winner != _measured_winner(r, mode):
            miss.append((c.n, c.c_mu))
    return agree, runs, miss


# --------------------------------------------------------------------------------------------
# What the chapter's figures draw (mmcl.figures.phase_diagrams draws only)
# --------------------------------------------------------------------------------------------
def race(size: str = "default") -> Dict[str, Stage1Race]:
    """The closed-form race of stage 1 at the chapter's configuration, ``{mode: Stage1Race}``
    (:func:`mmcl.proofs.predictions.stage1_race`): the figure ``phase-race``."""
    cfg = config(size)
    return {m: stage1_race(cfg, m) for m in MODES}


def n_snr_grid(size: str = "default", device: str = "cpu"):
    """The ``n x SNR`` study as a phase grid (adapt accuracy)."""
    from mmcl.experiments.sweep.phase import phase_grid

    return phase_grid(study_table("n_snr", size, device), "n", "snr")


def n_snr_curves(pg, levels=(0.5, 1.25, 2.5), points: int = 50) -> Dict[float, tuple]:
    """The curves ``n SNR^2 = c`` of Assumption 4.1(6) over the ``n`` of the grid ``pg`` (half a
    step beyond each end), ``{c: (n, snr)}`` as numpy arrays, for the figure ``phase-n-snr``."""
    import numpy as np

    from mmcl.experiments.sweep.formulas import snr_on_curve

    ns = np.geomspace(min(pg.xs) / 1.5, max(pg.xs) * 1.5, points)
    return {c: (ns, np.asarray(snr_on_curve(ns, c), dtype=float)) for c in levels}


def cmu_grid(size: str = "default", device: str = "cpu"):
    """The ``n x C_mu`` study as a phase grid."""
    from mmcl.experiments.sweep.phase import phase_grid

    return phase_grid(study_table("cmu", size, device), "n", "c_mu")


def d_n_grids(size: str = "default", device: str = "cpu"):
    """The ``d x n`` study: its phase grid and the untrained features' accuracy (single)."""
    from mmcl.experiments.sweep.phase import phase_grid

    t = study_table("d_n", size, device)
    return phase_grid(t, "dim", "n"), phase_grid(t, "dim", "n", "acc_adapt_init").single


def aug_grids(size: str = "default", device: str = "cpu"):
    """The ``tau x sigma_eps`` study: the accuracy and the loss phase grids."""
    from mmcl.experiments.sweep.phase import phase_grid

    t = study_table("aug_tau", size, device)
    return phase_grid(t, "tau", "sigma_eps"), phase_grid(t, "tau", "sigma_eps", "loss")


def view_summary(size: str = "default", device: str = "cpu") -> ViewSummary:
    """The denoised-view study summarised (:func:`mmcl.experiments.sweep.studies.summarise_view`)."""
    return summarise_view(study_table("view", size, device))
