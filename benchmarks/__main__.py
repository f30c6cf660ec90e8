"""Run benchmarks: ``python -m benchmarks [name ...] [--quick]`` (see benchmarks/__init__.py)."""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import pkgutil
import platform
import subprocess
import time
from pathlib import Path

import tieringlab  # noqa: F401  (x64 on)

HERE = Path(__file__).resolve().parent


def _commit() -> str | None:
    """The checkout's commit, with ``-dirty`` when tracked files differ from it (None outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=HERE,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty else "")


def main() -> int:
    names = sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(names)})")
    ap.add_argument("--quick", action="store_true", help="small sizes, to check the benchmark itself runs")
    args = ap.parse_args()
    unknown = sorted(set(args.names) - set(names))
    if unknown:
        ap.error(f"unknown benchmark {unknown[0]!r}; available: {', '.join(names)}")
    out_dir = HERE / "out"
    out_dir.mkdir(exist_ok=True)
    for name in args.names or names:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        load, date = os.getloadavg()[0], datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        t0 = time.perf_counter()
        result = module.run(quick=args.quick)
        result = {"benchmark": name, "quick": args.quick, "machine": platform.machine(),
                  "cpus": os.cpu_count(), "wall_s": round(time.perf_counter() - t0, 2), "commit": _commit(),
                  "date": date, "load_average_1min": round(load, 2), **result}
        (out_dir / f"{name}.json").write_text(json.dumps(result, indent=2, default=float) + "\n")
        ratios = {k: v for k, v in result.items() if k.startswith("ratio")}
        print(f"{name}: " + ", ".join(f"{k}={v:.3g}" for k, v in ratios.items()) + f"  ({result['wall_s']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
