"""The ColoredMNIST results as tables: Table 1 (markdown and HTML) and the sensitivity study."""
from __future__ import annotations

from typing import Dict

from mmcl.experiments.coloredmnist.table1 import PAPER, Table1Result

__all__ = ["format_table", "format_table_html", "format_sensitivity"]


def format_table(result: Table1Result) -> str:
    """A markdown table: variant, train and test accuracy against the noisy and the clean labels
    (mean +- s.d. over seeds, in %), with the paper's two rows below."""
    s = result.summary()
    n = len(result.seeds)
    lines = ["| variant | train acc. (%) | test acc. (%) | train, clean labels (%) | test, clean labels (%) |",
             "|---|---|---|---|---|"]
    for v, m in s.items():
        def f(k):
            return f"{100 * m[k]['mean']:.2f} ± {100 * m[k]['sd']:.2f}" if n > 1 else f"{100 * m[k]['mean']:.2f}"
        lines.append(f"| {v} | {f('train')} | {f('test')} | {f('train_clean')} | {f('test_clean')} |")
    for k, p in PAPER.items():
        lines.append(f"| paper: {k}-modal | {100 * p['train']:.2f} | {100 * p['test']:.2f} | n/a | n/a |")
    return "\n".join(lines)


def format_table_html(result: Table1Result) -> str:
    """:func:`format_table` as an HTML table (for notebooks, whose Markdown outputs have no tables)."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in format_table(result).splitlines()]
    head, body = rows[0], rows[2:]
    th = "".join(f"<th>{h}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def format_sensitivity(results: Dict[str, Table1Result]) -> str:
    """A markdown table of :func:`~mmcl.experiments.coloredmnist.sensitivity.run_sensitivity`'s
    results: one row per setting, test (OOD) accuracy of each variant (mean over seeds, %)."""
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict of setting -> Table1Result")
    names = list(next(iter(results.values())).summary())
    lines = ["| setting | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for setting, res in results.items():
        s = res.summary()
        lines.append(f"| {setting} | " + " | ".join(f"{100 * s[v]['test']['mean']:.1f}" for v in names) + " |")
    return "\n".join(lines)
