"""The tidy result table of a sweep: :class:`~mmcl.experiments.sweep.SweepTable`, one row (a dict)
per run.

Columns, filters, seed means, CSV and Parquet output, and the concatenation of several sweeps."""
from __future__ import annotations

import collections
import csv
import json
import math
import numbers
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from mmcl.model.config import SyntheticConfig

__all__ = ["SweepTable"]


class SweepTable:
    """Rows of a sweep: a list of dicts with the same keys (``columns``), one per run.

    ``configs`` holds the :class:`~mmcl.model.config.SyntheticConfig` of every row (not written to CSV);
    ``grid_keys`` the grid's parameter names; ``meta`` how the sweep ran (engine, dtype, seeds,
    the base config, the number of runs computed and read from the cache, the wall time).
    """

    def __init__(self, rows: List[dict], columns: Sequence[str], configs: Sequence[SyntheticConfig] = (),
                 grid_keys: Sequence[str] = (), meta: Optional[dict] = None):
        self.rows = list(rows)
        self.columns = list(columns)
        self.configs = list(configs) if configs else [None] * len(self.rows)
        self.grid_keys = list(grid_keys)
        self.meta = dict(meta or {})
        if len(self.configs) != len(self.rows):
            raise ValueError(f"SweepTable: {len(self.configs)} configs for {len(self.rows)} rows")

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, i: int) -> dict:
        return self.rows[i]

    def __repr__(self) -> str:
        keys = ", ".join(f"{k}: {len(self.unique(k))}" for k in self.grid_keys)
        return f"SweepTable({len(self)} rows; grid {{{keys}}}; columns {self.columns})"

    def _check(self, name: str) -> None:
        if name not in self.columns:
            raise ValueError(f"SweepTable has no column {name!r}; columns: {self.columns}")

    def column(self, name: str) -> list:
        """The values of one column, in row order."""
        self._check(name)
        return [r[name] for r in self.rows]

    def unique(self, name: str) -> list:
        """The distinct values of a column, sorted."""
        self._check(name)
        return sorted(set(self.column(name)))

    def filter(self, predicate: Optional[Callable[[dict], bool]] = None, **equals) -> "SweepTable":
        """Rows where ``predicate(row)`` is true and every ``column == value`` of ``equals`` holds."""
        for k in equals:
            self._check(k)
        keep = [i for i, r in enumerate(self.rows)
                if all(same_value(r[k], v) for k, v in equals.items()) and (predicate is None or predicate(r))]
        return SweepTable([self.rows[i] for i in keep], self.columns, [self.configs[i] for i in keep],
                          self.grid_keys, self.meta)

    def mean(self, value: str, by: Sequence[str]) -> List[dict]:
        """Mean, standard deviation and count of ``value`` over the rows of each distinct ``by``
        tuple (diverged runs and NaN values are left out of the mean, counted in ``n_nan``)."""
        self._check(value)
        for k in by:
            self._check(k)
        groups: Dict[tuple, list] = collections.OrderedDict()
        for r in self.rows:
            groups.setdefault(tuple(r[k] for k in by), []).append(r[value])
        out = []
        for key, vals in groups.items():
            good = [float(v) for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
            m = sum(good) / len(good) if good else float("nan")
            sd = (sum((v - m) ** 2 for v in good) / len(good)) ** 0.5 if good else float("nan")
            out.append({**dict(zip(by, key)), "mean": m, "sd": sd, "count": len(good), "n_nan": len(vals) - len(good)})
        return out

    def to_csv(self, path) -> Path:
        """Write the rows as CSV (header = ``columns``); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=self.columns)
            w.writeheader()
            for r in self.rows:
                w.writerow({k: _csv_value(r[k]) for k in self.columns})
        return path

    def to_parquet(self, path) -> Path:
        """Write the rows as Parquet (needs ``pyarrow``); ``meta`` goes into the file's metadata."""
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - pyarrow is present in the dev environment
            raise ValueError("to_parquet needs pyarrow (pip install pyarrow); use to_csv instead") from exc
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([{k: r[k] for k in self.columns} for r in self.rows])
        table = table.replace_schema_metadata({"mmcl.sweep": json.dumps(self.meta, default=str)})
        pq.write_table(table, path)
        return path

    @staticmethod
    def concat(tables: Sequence["SweepTable"]) -> "SweepTable":
        """Rows of several tables, one after the other; the columns are the union (first seen
        first), and a row lacks a column (value ``None``) where its table had no such column."""
        tables = list(tables)
        if not tables:
            raise ValueError("SweepTable.concat needs at least one table")
        cols: List[str] = []
        for t in tables:
            cols += [c for c in t.columns if c not in cols]
        keys: List[str] = []
        for t in tables:
            keys += [k for k in t.grid_keys if k not in keys]
        rows = [{c: r.get(c) for c in cols} for t in tables for r in t.rows]
        return SweepTable(rows, cols, [c for t in tables for c in t.configs], keys, tables[0].meta)


def same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, numbers.Real) and not isinstance(b, bool):
        return math.isclose(a, float(b), rel_tol=1e-12, abs_tol=0.0) or a == b
    return a == b


def _csv_value(v):
    if isinstance(v, float):
        return repr(v)  # round-trips exactly; nan -> 'nan'
    return v
