"""Time of one seed of every ColoredMNIST variant (Table 1), without the cache.

Reported per run: wall-clock and process CPU seconds of the training (as measured inside
:func:`mmcl.experiments.coloredmnist.train_model`) and of the whole run including evaluation (features,
linear probes, the probe-penalty sweep, the feature probes); and the totals.  The issue's budget
is six minutes for one seed of all variants on two CPU cores; the target is two and a half.
CPU seconds count every thread, so on a machine shared with other jobs the wall time is the less
reliable number: say so when you quote it.

    python benchmarks/bench_coloredmnist.py [--threads 2] [--device cuda] [--image-size 14] \
        [--ablations] --out bench_coloredmnist.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

import torch


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON file to write")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    ap.add_argument("--image-size", type=int, default=14, choices=(14, 28))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ablations", action="store_true", help="also time the ablation runs")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    from mmcl.experiments.coloredmnist import ABLATIONS, RUNS, ColoredMNISTConfig, make_colored_mnist, run_one

    data_cfg = ColoredMNISTConfig(image_size=args.image_size)
    load_before = os.getloadavg()
    t0, c0 = time.perf_counter(), time.process_time()
    data = make_colored_mnist(data_cfg, args.seed)
    runs = [*RUNS, *(ABLATIONS if args.ablations else ())]
    rows = []
    for run in runs:
        w, c = time.perf_counter(), time.process_time()
        r = run_one(run, args.seed, data_cfg=data_cfg, device=args.device, data=data, cache=False, progress=False)
        rows.append({"run": run, "train_wall_s": r.seconds, "train_cpu_s": r.cpu_seconds,
                     "total_wall_s": time.perf_counter() - w, "total_cpu_s": time.process_time() - c})
        print(f"{run:<24} train {r.seconds:6.1f} s wall {r.cpu_seconds:6.1f} s CPU | with evaluation "
              f"{rows[-1]['total_wall_s']:6.1f} s wall {rows[-1]['total_cpu_s']:6.1f} s CPU", flush=True)
    total = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
    print(f"all {len(runs)} runs, one seed: {total['wall_s']:.1f} s wall, {total['cpu_s']:.1f} s CPU "
          f"({torch.get_num_threads()} threads; load average before/after: see JSON)")
    out = {"runs": rows, "total": total, "threads": torch.get_num_threads(), "device": args.device,
           "image_size": args.image_size, "torch": torch.__version__, "platform": platform.platform(),
           "cpu_count": os.cpu_count(), "load_average_before": load_before, "load_average_after": os.getloadavg()}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
