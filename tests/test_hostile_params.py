"""Issue 32's params.yaml rows, one test per row: every route that reads a params file (``params check``,
``tieringlab run`` and every DVC stage through :func:`tieringlab.params.load`, ``sweep --params``, ``sweep -p``
values through :func:`tieringlab.params.loads`) is bounded by the file's size, refuses YAML 1.1 scalars that
do not mean what they look like, runs each section's cross-field checks and reports every error of a file.
The reader's rules are in :mod:`tieringlab.params`' docstring; test_hostile_inputs.py holds issue 18's rows.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
from params_files import check_fails, repo_params, section_check_fails, write_params  # tests/params_files.py

import tieringlab
import tieringlab.experiments  # registers every section
from tieringlab import params, pipeline, sweep
from tieringlab.params import ParamsError

REPO = Path(__file__).resolve().parent.parent


def billion_laughs(depth: int) -> str:
    """``depth`` levels of 9 aliases each, nested inside a list parameter: ~9^(depth+1) values."""
    inner = "&a0 [1,1,1,1,1,1,1,1,1]" + "".join(f", &a{i} [{','.join([f'*a{i - 1}'] * 9)}]"
                                                 for i in range(1, depth + 1))
    return f"seed: 0\nquickstart:\n  cache_sizes_mb: [[{inner}]]\n"


#: Runs ``params check`` on argv[1] in a child whose address space is capped at what it uses after
#: importing the package + 400 MB: a reader that builds what a file expands to dies there (MemoryError).
LIMITED_CHECK = textwrap.dedent("""
    import resource, sys
    import tieringlab.experiments
    from tieringlab.cli import main
    vm = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (400 << 20), vm + (400 << 20)))
    sys.exit(main(["params", "check", sys.argv[1]]))
""")


def limited_check(path: Path) -> subprocess.CompletedProcess:
    """``params check PATH`` in a child with a capped address space, on the package this test imported."""
    code = str(Path(tieringlab.__file__).resolve().parent.parent)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "TIERINGLAB_PROGRESS": "0",
           "PYTHONPATH": os.pathsep.join([code, *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-c", LIMITED_CHECK, str(path)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=path.parent)  # the timeout is a safety net, not the assertion


# ------------------------------------------------------------------------------------ bounded reading

def test_a_400_byte_alias_bomb_is_refused_at_its_alias_naming_the_line(tmp_path):
    """Issue 32: 410 bytes of nested aliases expand to 9^9 = 387 million values; the error message used to
    repr all of them (37 s and 1 GB at 400 bytes, ~10 GB at 450). Now the reader counts what each alias
    expands to on the composed node graph and stops at the alias that crosses 10,000 + 2 x bytes values."""
    text = billion_laughs(8)
    assert len(text) <= 410
    path = tmp_path / "params.yaml"
    path.write_text(text)
    r = limited_check(path)
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"{path}: line 3: alias *a3 expands the document to more than {10_000 + 2 * len(text):,} values" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr) < 1000
    # the same reader behind every route: load (run, every DVC stage, sweep --params) and a sweep -p value
    with pytest.raises(ParamsError, match=r"line 3: alias \*a3 expands"):
        params.load(path)
    with pytest.raises(ParamsError, match=r"sweep: -p value .*line 1: alias \*a3 expands"):
        sweep.parse_value(text.splitlines()[2].split(": ", 1)[1])
    with pytest.raises(ParamsError, match=r"line 3: alias \*a3 expands"):
        pipeline.notebook_parameters(REPO / "notebooks/00_quickstart.ipynb", path, tmp_path / "results")


def test_the_alias_limit_grows_with_the_file_and_repeating_a_value_stays_allowed(tmp_path):
    """Aliases that repeat a value (a trace list used by two sections) read as before; the limit is the
    values counted, so the same nest passes once it fits (independent count: 1 + 9 x ... per level)."""
    path = tmp_path / "params.yaml"
    path.write_text("seed: 0\ngvfrm_multi_vm:\n  cf4: &cf [mds_0, src1_2, stg_0, usr_0]\n"
                    "trace_characterization:\n  fig1_traces: *cf\n")
    loaded = params.load(path)
    assert loaded["trace_characterization"].fig1_traces == loaded["gvfrm_multi_vm"].cf4 == (
        "mds_0", "src1_2", "stg_0", "usr_0")
    # depth 3 expands to 1 + (10 + 91 + 820 + 7381) values, under 10,000 + 2 x bytes: read (shared, not
    # copied), then refused by the schema naming the key
    value = params.loads(billion_laughs(3))["quickstart"]["cache_sizes_mb"]
    v = value[0]
    assert v[3][0] is v[2] and v[2][0] is v[1] and v[1][0] is v[0] == [1] * 9
    path.write_text(billion_laughs(3))
    with pytest.raises(ParamsError, match=r"quickstart\.cache_sizes_mb\[0\]: expected a number >= 0\.001, got \[\["):
        params.load(path)


def test_a_huge_value_is_never_printed_in_full():
    """``_short`` walks a value only as far as its limit: a list of 9^40 shared values (as aliases build)
    is cut at once (the old repr never finished)."""
    assert params._short(list(range(5))) == "[0, 1, 2, 3, 4]"       # small values: the repr, as before
    s = "k" * 100_000
    assert params._short(s) == "'" + "k" * 39 + "... (100000 characters)"
    big = 10**5000 - 1  # beyond Python's 4300-digit str() limit: named, not printed (repr would raise)
    assert params._short(big) == "an integer of about 5000 digits"
    r: list = []
    r.append(r)
    assert params._short(r).endswith("(a list of 1 items)")
    x: list = [1] * 9
    for _ in range(40):
        x = [x] * 9
    text = params._short(x)
    assert text.startswith("[[[[") and text.endswith("... (a list of 9 items)") and len(text) < 80


def test_a_recursive_alias_or_deep_nesting_names_the_line(tmp_path, capsys):
    path = tmp_path / "params.yaml"
    path.write_text("seed: 0\nquickstart:\n  cache_sizes_mb: &a [1, *a]\n")
    check_fails(path, capsys, f"{path}: line 3: alias *a refers to a value that contains it")
    path.write_text("seed: 0\nquickstart:\n  cache_sizes_mb: " + "[" * 5000 + "]" * 5000 + "\n")
    check_fails(path, capsys, f"{path}: line 3: values nested more than {params.MAX_DEPTH} levels deep")
    # an alias that would nest a shallow value too deep is refused at the alias
    path.write_text("seed: 0\nx: &d " + "[" * 20 + "]" * 20 + "\nquickstart:\n  cache_sizes_mb: "
                    + "[" * 20 + "*d" + "]" * 20 + "\n")
    check_fails(path, capsys, "line 4: alias *d nests values more than")


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "sparse_1gb"])
def test_a_fifo_dev_zero_or_1gb_file_is_refused_before_it_is_read(tmp_path, kind):
    """A FIFO with no writer blocked the reader forever, a symlink to /dev/zero and a 1 GB file read until
    memory ran out. Now: one clear error from the file's type or size, nothing read."""
    path = tmp_path / "params.yaml"
    if kind == "fifo":
        os.mkfifo(path)
        want = "is a FIFO (named pipe), not a regular file"
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
        want = "is a character device, not a regular file"
    else:
        with open(path, "wb") as f:  # sparse: no disk used
            f.write(b"seed: 0\n")
            f.truncate(1 << 30)
        want = "larger than 1,048,576 bytes"
    r = limited_check(path)
    assert r.returncode == 2, r.stderr[-2000:]
    assert f"{path}: {want}" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------------ YAML 1.1 surprises

@pytest.mark.parametrize(("line", "message"), [
    ("  max_requests: 010", "010 is read by YAML 1.1 as octal 8; write 8 or 10"),
    ("  max_requests: 0x10", "0x10 is read by YAML 1.1 as hexadecimal 16; write 16"),
    ("  max_requests: 0b10", "0b10 is read by YAML 1.1 as binary 2; write 2"),
    ("  max_requests: 1_000", "1_000 is read by YAML 1.1 as 1000 (YAML 1.2 and DVC read the string '1_000'); "
                              "write 1000"),
    ("  max_requests: 1:30", "1:30 is read by YAML 1.1 as sexagesimal (base 60) 90; write 90"),
    ("  reaccess_window_s: 5:00.5", "5:00.5 is read by YAML 1.1 as sexagesimal (base 60) 300.5"),
    ("  max_requests: !!int 010", "010 is read by YAML 1.1 as octal 8"),
    ("  max_requests: 0x" + "f" * 20000, "'0x" + "f" * 37 + "... (20002 characters) is read by YAML 1.1 as "
                                        "hexadecimal (a number of many digits)"),
])
def test_yaml_1_1_numbers_that_do_not_mean_what_they_look_like_name_the_line(tmp_path, capsys, line, message):
    """``max_requests: 010`` was read as 8 (YAML 1.1 octal), ``1:30`` as 90, silently; DVC (YAML 1.2) reads
    010 as 10. Each is refused with its line; a 20,000-digit hex number used to crash the message."""
    path = tmp_path / "params.yaml"
    path.write_text(f"seed: 0\nquickstart:\n  line_bytes: 4096\n{line}\n")
    check_fails(path, capsys, f"{path}: line 4: {message}")
    with pytest.raises(ParamsError, match="sweep: -p value .*: line 1: .*is read by YAML 1.1 as"):
        sweep.parse_value(line.split(": ", 1)[1])  # a sweep -p value goes through the same reader


@pytest.mark.parametrize(("value", "boolean"), [("yes", "true"), ("no", "false"), ("on", "true"), ("Off", "false")])
def test_yes_no_on_off_are_refused_naming_the_line(tmp_path, capsys, value, boolean):
    data = (REPO / "params.yaml").read_text()
    text = data.replace("  include_cloudphysics: true ", f"  include_cloudphysics: {value} ", 1)
    assert text != data
    path = tmp_path / "params.yaml"
    path.write_text(text)
    n = text.splitlines().index(next(s for s in text.splitlines() if s.startswith("  include_cloudphysics"))) + 1
    check_fails(path, capsys, f"line {n}: {value} is read by YAML 1.1 as the boolean {boolean}; write {boolean}, "
                              f"or quote it ('{value}') for a string")
    # quoted, it is a string: the schema names the key and what it allows
    path.write_text(data.replace("  include_cloudphysics: true ", f"  include_cloudphysics: '{value}' ", 1))
    check_fails(path, capsys, "vfrm_single_vm.include_cloudphysics: expected true or false")


def test_plain_scalars_read_as_before(tmp_path):
    """A guard (passes before and after): plain decimals, quoted look-alikes and sweep -p values read as the
    plain SafeLoader reads them."""
    path = tmp_path / "params.yaml"
    path.write_text("seed: 0\nquickstart:\n  max_requests: -0\n  cache_sizes_mb: [.5, 1., 007.5, 2.5e+3]\n"
                    "traces:\n  msr_md5: '010'\n  msr_dir: \"0x10\"\n")
    loaded = params.load(path)
    assert loaded["quickstart"].max_requests == 0
    assert loaded["quickstart"].cache_sizes_mb == (0.5, 1.0, 7.5, 2500.0)
    assert (loaded["traces"].msr_md5, loaded["traces"].msr_dir) == ("010", "0x10")
    for text in ("8192", "0.5", "true", "[1, 4]", "mds_0", "[1,", ""):
        assert sweep.parse_value(text) == (yaml.safe_load(text) if text != "[1," else text)


def test_yaml_1_1_line_breaks_editors_do_not_show_are_refused(tmp_path, capsys):
    """YAML 1.1 breaks a line at U+0085 (NEL) and U+2028/U+2029: ``line_bytes: 4096<NEL>  max_requests: 7``
    looks like one line in an editor but set max_requests."""
    path = tmp_path / "params.yaml"
    path.write_text("seed: 0\nquickstart:\n  line_bytes: 4096\x85  max_requests: 7\n", encoding="utf-8")
    check_fails(path, capsys, f"{path}: line 3: character U+0085 (next line) is a line break to YAML 1.1")
    # a BOM inside the file (a pasted fragment) is named, not printed as an invisible character
    path.write_text("seed: 0\n\ufeffquickstart:\n  max_requests: 7\n", encoding="utf-8")
    check_fails(path, capsys, f"{path}: '\\ufeffquickstart': unknown top-level key")
    # numbers YAML 1.1 reads as strings (no dot or no exponent sign, Python's 0o) get a hint
    path.write_text("seed: 0\nquickstart:\n  reaccess_window_s: 1e3\n  max_requests: 0o10\n")
    check_fails(path, capsys, "quickstart.reaccess_window_s: expected a number >= 1.0 (s), got '1e3' (str); YAML 1.1 "
                              "reads 1e3 as a string, not a number: write 1000.0",
                "quickstart.max_requests: expected an integer >= 0, got '0o10' (str); YAML 1.1 reads 0o10 as a "
                "string, not a number: write 8")


# ------------------------------------------------------------------------------------ cross-field checks

@pytest.mark.parametrize(("section", "values", "key", "why"), [
    ("eafc", {"fixed_partitions_gb": [500]}, "eafc.fixed_partitions_gb", "[500.0] exceed store.ssd_bytes = 160 GB"),
    ("eafc", {"policy": {"p_init": 200e9}}, "eafc.policy.p_init", "must lie in [p_floor, p_ceiling]"),
    ("eafc", {"fixed_partitions_gb": [30, 30]}, "eafc.fixed_partitions_gb", "has duplicates"),
    ("eafc", {"mix_ssd_gb": 2.0}, "eafc.mix_ssd_gb", "must hold the policy.p_floor"),
    ("vfrm_single_vm", {"flash_mb": [100, 4096, 256, 512, 1024, 2048]}, "vfrm_single_vm.flash_mb",
     "must be in increasing order (Fig. 6's x axis)"),
    ("lmst", {"fig16_alphas": [0.0, 0.3, 0.3]}, "lmst.fig16_alphas", "has duplicates: [0.0, 0.3, 0.3]"),
    ("lmst", {"burst_ratios": [0.3, 0.5, 0.5]}, "lmst.burst_ratios", "has duplicates"),
    ("otf_ast", {"scale": 0.001}, "otf_ast.scale", "0.001 leaves about 9.0 IOs per t_s = 60 s interval on src1_0"),
    ("quickstart", {"cache_sizes_mb": [4, 1, 4]}, "quickstart.cache_sizes_mb", "has duplicates: [4.0, 1.0, 4.0]"),
    ("quickstart", {"cache_sizes_mb": [4, 1]}, "quickstart.cache_sizes_mb", "must be in increasing order"),
    ("gvfrm_multi_vm", {"flash_gb": [1, 4, 2]}, "gvfrm_multi_vm.flash_gb", "must be in increasing order"),
    ("quickstart", {"cache_sizes_mb": [1e300]}, "quickstart.cache_sizes_mb", "[1e+300] exceed 8796093022207 MiB"),
    ("vfrm_single_vm", {"flash_mb": [100, 1e300], "cost_flash_mb": 100}, "vfrm_single_vm.flash_mb[1]",
     "expected a number in [1.0, 8796093022207]"),
    ("trace_characterization", {"cache_gb": 1e300}, "trace_characterization.cache_gb", "in [0.001, 8589934591]"),
    ("eafc", {"store": {"ssd_bytes": 1e300}}, "eafc.store.ssd_bytes", "in [1.0, 9223372036854775807]"),
])
def test_cross_field_checks_of_issue_32(tmp_path, capsys, section, values, key, why):
    section_check_fails(tmp_path, capsys, section, values, key, why)


def test_the_size_limit_is_where_the_run_stops_working():
    """``cache_sizes_mb: [1e300]`` passed the check and failed in the run: the LRU model counts bytes in
    int64, so 1e300 MiB wrapped to a negative size. The limit, 2^43 - 1 MiB, still runs (a cache larger
    than the trace: every re-access hits) and the next MiB fails there."""
    from tieringlab.experiments import quickstart
    from tieringlab.traces import stats
    from tieringlab.units import MiB

    n = 60
    ds = xr.Dataset({"time": ("request", np.arange(n) * 1.0), "offset": ("request", (np.arange(n) % 7) * 4096),
                     "size": ("request", np.full(n, 4096)), "is_write": ("request", np.zeros(n, bool))})
    top = 2**43 - 1  # MiB: (2^43 - 1) x 2^20 < 2^63 bytes
    p = params.validate_section("quickstart", {"cache_sizes_mb": [1.0, float(top)]})
    res = quickstart.run(p, ds)
    assert res.hit_ratio.values.tolist() == [(n - 7) / n] * 2   # 7 cold misses, then every access hits
    with pytest.raises(ValueError, match="cache_bytes must be"):
        stats.lru_hit_ratio(ds, np.array([top + 1.0]) * MiB)
    with pytest.raises(ParamsError, match="exceed 8796093022207 MiB"):
        params.validate_section("quickstart", {"cache_sizes_mb": [top + 1.0]})


def test_otf_ast_scale_bound_follows_the_concentration_test():
    """The bound is n_top / (rate x t_s) with the quieter twin's rate (src1_0, 150 IO/s): a shorter interval or a
    larger n needs a larger scale; 0.003 is above it at paper settings (0.003 x 150 x 60 = 27 IOs > n_top = 20)."""
    params.validate_section("otf_ast", {"scale": 0.003})
    with pytest.raises(ParamsError, match=r"otf_ast\.scale: 0\.003 leaves about 13\.5 IOs per t_s = 30 s"):
        params.validate_section("otf_ast", {"scale": 0.003, "policy": {"t_s": 30}})
    with pytest.raises(ParamsError, match="no more than n_top = 40"):
        params.validate_section("otf_ast", {"scale": 0.003, "policy": {"n_top": 40}})


# ------------------------------------------------------------------------------------ every error reported

def test_params_check_reports_every_error_of_a_file(tmp_path, capsys):
    """``params check`` stopped at the first error; now every section and key is reported, and the
    ParamsError lists them (``errors``), one per line."""
    data = repo_params()
    data["quickstart"].update(line_bytes=3, max_requests=-1, cache_sizes_mb=[4, 1, 4])
    data["lmst"]["fig16_alphas"] = [0.1, 0.1]
    data["lmst"]["nope"] = 1
    data["eafc"]["fixed_partitions_gb"] = [500]
    data["eafc"]["mix_ssd_gb"] = 2.0
    data["bogus"] = {}
    data.pop("seed")
    path = write_params(tmp_path, data)
    err = check_fails(path, capsys, f"{path}: quickstart.line_bytes: expected one of",
                      f"{path}: quickstart.max_requests: expected an integer >= 0",
                      f"{path}: lmst.nope: unknown parameter", f"{path}: eafc.fixed_partitions_gb: [500.0] exceed",
                      f"{path}: eafc.mix_ssd_gb (2) must hold the policy.p_floor",
                      f"{path}: bogus: unknown top-level key", f"{path}: seed: missing", "tieringlab: 7 errors")
    assert "cache_sizes_mb has" not in err  # cross-field checks run once the section's keys are valid
    assert "fig16_alphas has" not in err    # (lmst has an unknown key)
    with pytest.raises(ParamsError) as exc:
        params.load(path)
    assert len(exc.value.errors) == 7 and str(exc.value) == "\n".join(exc.value.errors)
    data["lmst"].pop("nope")
    data["quickstart"].update(line_bytes=4096, max_requests=0)
    with pytest.raises(ParamsError) as exc:
        params.load(write_params(tmp_path, data))
    assert [e.split(": ")[1] for e in exc.value.errors] == [
        "quickstart.cache_sizes_mb has duplicates", "lmst.fig16_alphas has duplicates",
        "eafc.fixed_partitions_gb",
        "eafc.mix_ssd_gb (2) must hold the policy.p_floor (1 GB) of each of the mix's 3 workloads (>= 3)", "bogus",
        "seed"]


def test_every_line_of_a_file_with_several_surprises_and_duplicates(tmp_path, capsys):
    path = tmp_path / "params.yaml"
    path.write_text("seed: 010\nquickstart:\n  max_requests: 1_0\n  line_bytes: 4096\n  line_bytes: 512\n")
    check_fails(path, capsys, "line 1: 010 is read by YAML 1.1 as octal 8", "line 3: 1_0 is read",
                "line 5: key 'line_bytes' given twice (lines 4 and 5)", "tieringlab: 3 errors")


def test_repo_params_yaml_reads_as_plain_yaml_does():
    """The new reader changes nothing for a valid file: the repository's params.yaml gives the values the
    plain PyYAML SafeLoader gives, section by section."""
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    loaded = params.load(REPO / "params.yaml")
    assert loaded["seed"] == raw["seed"]
    for name, values in raw.items():
        if name != "seed":
            assert loaded[name] == params.validate_section(name, values or {}), name
            assert dataclasses.asdict(loaded[name]) == dataclasses.asdict(params.validate_section(name, values or {}))
    assert params.loads((REPO / "params.yaml").read_text()) == raw
