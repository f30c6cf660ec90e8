"""``tieringlab`` command line: run a notebook stage, sweep it, build the ledger, fetch data, check params,
simulate cache policies on a trace."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tieringlab import params


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tieringlab", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p_run = sub.add_parser("run", help="run one notebook as a pipeline stage (validated params, papermill)")
    p_run.add_argument("notebook")
    p_run.add_argument("--params", default=None, help="params file (default: params.yaml at the repo root)")
    p_run.add_argument("--results", default="results")

    p_sw = sub.add_parser("sweep", help="run a notebook over a grid of parameters on Dask distributed -> DIR/sweep.nc",
                          description="Run NOTEBOOK once per point of the grid (the product of the -p lists), every "
                                      "value validated against the params.yaml schema first; write each executed "
                                      "notebook under DIR/notebooks/ and every run's scalar metrics to DIR/sweep.nc. "
                                      "Ctrl-C stops it: the completed points are kept in DIR/sweep.nc (exit 130). "
                                      "Exit status 1 when a point failed.")
    p_sw.add_argument("notebook")
    p_sw.add_argument("-p", "--param", dest="grid", nargs="+", action="append", required=True,
                      metavar="NAME VALUE",
                      help="a parameter and its values (read as YAML: 8192, 0.5, true, [1, 4]); repeat for a grid. "
                           "NAME: a field of the notebook's section, FIELD.SUBFIELD of parameters it embeds "
                           "(policy.e), seed, or SECTION.FIELD of a shared section")
    p_sw.add_argument("--scheduler", default=None, metavar="ADDRESS|local:N",
                      help="a running Dask scheduler (tcp://host:8786) or local:N, a LocalCluster of N workers "
                           "(default: local:N, N = min(points, CPUs))")
    p_sw.add_argument("--out", required=True, metavar="DIR",
                      help="output folder: a new or empty one (checked before anything runs)")
    p_sw.add_argument("--overwrite", action="store_true",
                      help="--out may be a previous sweep's folder: its sweep.nc, notebooks/ and results/ are "
                           "deleted first")
    p_sw.add_argument("--connect-timeout", type=float, default=None, metavar="SECONDS",
                      help="how long to wait for a scheduler address to answer (default: 10)")
    p_sw.add_argument("--params", default=None, help="params file the values not swept come from "
                                                     "(default: params.yaml at the repo root)")
    p_sw.add_argument("--base", choices=["params", "notebook"], default="params",
                      help="values not swept: from the params file (default) or the notebook's own small defaults")

    p_rep = sub.add_parser("report", help="build the claims ledger (results/REPORT.md, results/report.csv) and the "
                                          "results site (results/index.html)")
    p_rep.add_argument("--results", default="results")

    p_sim = sub.add_parser(
        "simulate", help="miss ratios of trace policies on a trace file, at several cache sizes",
        description="Read TRACE (any format of tieringlab.traces.formats), run each policy (a trace system of the "
                    "registry, paper defaults) at each cache size, and print the miss ratios (policy x size). "
                    "Example: tieringlab simulate trace.oracleGeneral.zst --policy LRU,ARC --sizes 64MiB,1GiB")
    p_sim.add_argument("trace", help="the trace file")
    p_sim.add_argument("--format", default=None, metavar="F",
                       help="trace format (default: from the name or first bytes): one of "
                            "msr, cloudphysics, oracleGeneral, lcs, vscsi, csv, txt, tencent_cbs, alibaba")
    p_sim.add_argument("--policy", required=True, metavar="P1,P2",
                       help="comma-separated trace policies of the registry (LRU, ARC, CAR, vFRM, G1-vFRM, ...)")
    p_sim.add_argument("--sizes", required=True, metavar="S1,S2",
                       help="comma-separated cache sizes: KiB/MiB/GiB/TiB (1024^k), KB/MB/GB/TB (1000^k) or bytes")
    p_sim.add_argument("--plot", default=None, metavar="FILE", help="also draw hit-ratio curves to FILE (.png, .pdf)")
    p_sim.add_argument("--requests", type=int, default=None, metavar="N", help="simulate the first N requests only")
    p_sim.add_argument("--volume", type=int, default=None, metavar="ID",
                       help="tencent_cbs/alibaba: the volume (VolumeID / device_id) to read")
    p_sim.add_argument("--obj-id-bytes", type=int, default=None, metavar="N",
                       help="oracleGeneral/lcs/csv/txt: bytes per object id (default 4096; 512 sectors, 1 bytes)")
    p_sim.add_argument("--csv-spec", default=None, metavar="KEY=N,...",
                       help="csv: the column spec, e.g. fields=4,time=1,obj_id=2,size=3,op=4,header=1,ticks_per_s=1")

    p_data = sub.add_parser("data", help="pinned data")
    p_data.add_argument("action", choices=["fetch", "list"])
    p_data.add_argument("names", nargs="*", help="datasets (default: all)")

    p_par = sub.add_parser("params", help="check params.yaml against the schema, or print the schema")
    p_par.add_argument("action", choices=["check", "schema"])
    p_par.add_argument("target", nargs="?", default=None,
                       help="check: the params file (default params.yaml); schema: one section (default: every one)")

    args = ap.parse_args(argv)
    try:
        if args.cmd == "run":
            from tieringlab import pipeline  # noqa: PLC0415

            print(pipeline.run(args.notebook, params_path=args.params, results=args.results))
        elif args.cmd == "sweep":
            import signal  # noqa: PLC0415
            import threading  # noqa: PLC0415

            from tieringlab import sweep  # noqa: PLC0415  (imports Dask only when sweeping)

            grid = {}
            for name, *values in args.grid:
                if not values:
                    raise sweep.SweepError(f"sweep: -p {name}: give at least one value")
                if name in grid:
                    raise sweep.SweepError(f"sweep: -p {name}: given twice")
                grid[name] = [sweep.parse_value(v) for v in values]
            # Ctrl-C stops a sweep, also one started where SIGINT is ignored (a shell's background job)
            main_thread = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.default_int_handler) if main_thread else None
            try:
                ds = sweep.sweep(args.notebook, grid, out=args.out, scheduler=args.scheduler,
                                 params_path=args.params, base=args.base, overwrite=args.overwrite,
                                 connect_timeout=args.connect_timeout)
            except KeyboardInterrupt as exc:  # SweepInterrupted says what was kept; earlier, nothing ran
                print(f"tieringlab: {exc}" if isinstance(exc, sweep.SweepInterrupted) else
                      "tieringlab: sweep: interrupted before any point ran", file=sys.stderr)
                return 130
            finally:
                if main_thread and previous is not None:
                    signal.signal(signal.SIGINT, previous)
            failed = json.loads(ds.attrs["failed_points"])
            print(f"{Path(args.out) / sweep.SWEEP_FILE}: {int(ds.attrs['points']) - len(failed)} of "
                  f"{ds.attrs['points']} points ran" + (f"; failed: {', '.join(failed)}" if failed else ""))
            return 1 if failed else 0
        elif args.cmd == "report":
            from tieringlab import report  # noqa: PLC0415

            # the one entry point: the ledger, then the results site (as python -m tieringlab.report)
            return report.main(["--results", str(args.results)])
        elif args.cmd == "simulate":
            return _simulate(args)
        elif args.cmd == "data":
            from tieringlab import data  # noqa: PLC0415

            names = args.names or sorted(data.REGISTRY)
            pins = [data.pinned(name) for name in names]  # an unknown name stops here, listing the known ones
            for name, pf in zip(names, pins):
                if args.action == "list":
                    print(f"{name}\t{pf.path}\tmd5={pf.md5}\tsha256={pf.sha256}\t{pf.url}")
                else:
                    print(f"{name}: {data.fetch(name)}")
        elif args.cmd == "params":
            import tieringlab.experiments  # noqa: F401, PLC0415  (registers every params section)

            if args.action == "check":
                path = args.target or "params.yaml"
                loaded = params.load(path)
                print(f"{path}: OK ({len(loaded) - 1} sections)")
            else:
                print(params.schema_markdown(args.target))
    except (params.ParamsError, OSError, KeyError, ValueError) as exc:
        # KeyError's str() is the repr of its argument ("'nope'"): print the message itself
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        errors = exc.errors if isinstance(exc, params.ParamsError) else [msg]
        for err in errors:  # a params file reports every error it has, one per line
            print(f"tieringlab: error: {err}", file=sys.stderr)
        if len(errors) > 1:
            print(f"tieringlab: {len(errors)} errors", file=sys.stderr)
        return 2
    return 0


_CSV_SPEC = {"fields": "n_fields", "obj_id": "obj_id_field", "time": "time_field", "size": "obj_size_field",
             "op": "op_field", "header": "has_header", "ticks_per_s": "ticks_per_s"}


def _csv_spec(text: str) -> dict:
    """``fields=4,time=1,obj_id=2`` -> read_csv_trace keywords; unknown keys and non-integers are errors."""
    out = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if key not in _CSV_SPEC or not sep or not value.strip().isdigit():
            raise ValueError(f"--csv-spec {text!r}: expected KEY=N items with KEY one of {', '.join(_CSV_SPEC)}; "
                             f"got {item!r}")
        out[_CSV_SPEC[key]] = bool(int(value)) if key == "header" else int(value)
    return out


def _simulate(args) -> int:
    from tieringlab import simulate  # noqa: PLC0415
    from tieringlab.traces import formats  # noqa: PLC0415

    sizes = simulate.parse_sizes(args.sizes)           # bad sizes and policies fail before the trace is read
    policies = simulate.resolve_policies(args.policy)
    fmt = args.format or formats.detect_format(args.trace)
    if fmt not in formats.FORMATS:
        raise ValueError(f"--format {fmt!r}: unknown trace format; known: {', '.join(formats.FORMATS)}")
    kw = {}
    if args.volume is not None:
        if fmt not in ("tencent_cbs", "alibaba"):
            raise ValueError(f"--volume applies to the tencent_cbs and alibaba formats, not {fmt}")
        kw["volume"] = args.volume
    if args.obj_id_bytes is not None:
        if fmt not in ("oracleGeneral", "lcs", "csv", "txt"):
            raise ValueError(f"--obj-id-bytes applies to the oracleGeneral, lcs, csv and txt formats, not {fmt}")
        kw["obj_id_bytes"] = args.obj_id_bytes
    if fmt == "csv":
        if not args.csv_spec:
            raise ValueError("--format csv needs --csv-spec (fields=N,obj_id=N[,time=N,size=N,op=N,header=1])")
        kw.update(_csv_spec(args.csv_spec))
    elif args.csv_spec:
        raise ValueError(f"--csv-spec applies to the csv format, not {fmt}")
    ds = formats.read_trace(args.trace, fmt, **kw)
    if args.requests is not None:
        if args.requests < 1:
            raise ValueError(f"--requests must be a positive number of requests, got {args.requests}")
        ds = ds.isel(request=slice(0, args.requests))
    result = simulate.simulate(ds, policies, sizes)
    print(simulate.miss_table(result))
    if args.plot:
        print(f"hit-ratio curves -> {simulate.plot_hit_ratio(result, args.plot)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
