"""Issue 18's table of hostile inputs, one test per row: each gets a clear error naming the file and the
line (traces) or the key (params), or is handled as documented. Trace rules are in the readers'
docstrings (tieringlab.traces.readers); the property tests in test_reader_properties.py cover random files.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from params_files import check_fails, repo_params, section_check_fails, write_params  # tests/params_files.py

from tieringlab import fileio, params, pipeline, report
from tieringlab.cli import main as cli
from tieringlab.params import ParamsError
from tieringlab.results import Outputs
from tieringlab.traces import TraceFormatError, read_cloudphysics, read_msr
from tieringlab.traces.readers import MAX_REQUEST_BYTES

REPO = Path(__file__).resolve().parent.parent
CP_HEADER = "version,time,op,size,lbn\n"
MSR = "128166372003061629,hm,1,Read,{off},{size},41286\n"


def cp_file(tmp_path, body: str, name="cp.csv") -> Path:
    p = tmp_path / name
    p.write_bytes((CP_HEADER + body).encode())
    return p


def msr_file(tmp_path, text: str, name="x_0.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


def raises_at(read, path, line: int, field: str | None = None, *more: str) -> str:
    with pytest.raises(TraceFormatError) as exc:
        read(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}: line {line}: "), msg
    if field:
        assert f"field {field!r}" in msg, msg
    for text in more:
        assert text in msg, msg
    return msg


# ------------------------------------------------------------------------------------ trace rows

def test_cloudphysics_lbn_2_60_is_an_error_not_a_wrapped_offset(tmp_path):
    # 2^60 sectors x 512 bytes = 2^69: int64 wraps to offset 0 without the check
    path = cp_file(tmp_path, f"1,10,28,512,1\n1,11,2a,4096,{2**60}\n")
    raises_at(read_cloudphysics, path, 3, "lbn", "out of range", "2^53")
    ds = read_cloudphysics(path, errors="skip")
    assert ds["offset"].values.tolist() == [512] and ds.attrs["n_skipped"] == 1


def test_msr_timestamp_2_64_is_an_error(tmp_path):
    path = msr_file(tmp_path, MSR.format(off=0, size=512) + f"{2**64},hm,1,Read,0,512,1\n")
    raises_at(read_msr, path, 2, "Timestamp", "out of range")


def test_msr_offset_near_2_63_is_an_error(tmp_path):
    path = msr_file(tmp_path, MSR.format(off=2**63 - 100, size=4096))
    raises_at(read_msr, path, 1, "Offset", "out of range")
    # a request that starts inside the address limit and ends beyond it (offset + size would be wrong)
    path = msr_file(tmp_path, MSR.format(off=0, size=512) + MSR.format(off=2**53 - 100, size=4096), "y_0.csv")
    raises_at(read_msr, path, 2, "Offset", "offset + size")


def test_negative_and_decreasing_timestamps(tmp_path):
    # a negative timestamp: out of range (FILETIME and CloudPhysics seconds are >= 0)
    path = msr_file(tmp_path, MSR.format(off=0, size=512) + "-5,hm,1,Read,0,512,1\n")
    raises_at(read_msr, path, 2, "Timestamp", "out of range")
    path = cp_file(tmp_path, "1,10,28,512,1\n1,-3,2a,4096,2\n")
    raises_at(read_cloudphysics, path, 3, "time")
    # time going back by more than max_time_inversion_s (1 s) is an error naming both lines, in both modes
    path = cp_file(tmp_path, "1,10,28,512,1\n1,20,28,512,1\n1,18,2a,4096,2\n", "back.csv")
    raises_at(read_cloudphysics, path, 4, "time", "goes back 2 s from line 3's", "max_time_inversion_s")
    with pytest.raises(TraceFormatError, match="goes back"):
        read_cloudphysics(path, errors="skip")
    assert read_cloudphysics(path, max_time_inversion_s=2.0)["time"].values.tolist() == [0.0, 10.0, 10.0]
    # a small inversion (as real MSR files have) gets the latest earlier time: time stays non-decreasing
    t = 128166372003061629
    path = msr_file(tmp_path, "".join(f"{x},hm,1,Read,0,512,1\n" for x in (t, t + 5_000_000, t + 1_000_000,
                                                                          t + 20_000_000)), "z_0.csv")
    ds = read_msr(path)
    assert ds["time"].values.tolist() == [0.0, 0.5, 0.5, 2.0] and ds.attrs["n_time_clamped"] == 1


def test_cloudphysics_cut_inside_last_field_is_reported(tmp_path):
    good = "1,10,28,512,42932745\n1,11,2a,4096,42936150\n"
    path = cp_file(tmp_path, good[:-4])  # cut inside the last lbn, no final newline
    raises_at(read_cloudphysics, path, 3, None, "does not end with a newline", "cut short")
    ds = read_cloudphysics(path, errors="skip")
    assert ds.sizes["request"] == 1 and ds.attrs["n_skipped"] == 1
    assert read_cloudphysics(cp_file(tmp_path, good, "whole.csv"))["offset"].values[-1] == 42936150 * 512


def test_cloudphysics_rows_with_six_fields_name_the_line(tmp_path):
    # pandas used to take the extra first column as an index and shift the others silently
    path = cp_file(tmp_path, "0,1,10,28,512,1\n0,1,11,2a,4096,2\n")
    raises_at(read_cloudphysics, path, 2, None, "wrong number of fields", "expected 5")
    path = cp_file(tmp_path, "1,10,28,512,1\n0,1,11,2a,4096,2\n", "later.csv")
    raises_at(read_cloudphysics, path, 3, None, "wrong number of fields")


def test_utf8_bom_before_the_header_is_recognized(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (CP_HEADER + "1,10,28,512,1\n1,11,2a,4096,2\n").encode())
    ds = read_cloudphysics(path)
    assert ds["offset"].values.tolist() == [512, 1024] and ds["is_write"].values.tolist() == [False, True]
    path = tmp_path / "bom_0.csv"  # MSR without a header: the BOM is not part of the first Timestamp
    path.write_bytes(b"\xef\xbb\xbf" + MSR.format(off=4096, size=512).encode())
    assert read_msr(path)["offset"].values.tolist() == [4096]


def test_size_2_50_names_the_line_and_the_limit(tmp_path):
    path = msr_file(tmp_path, MSR.format(off=0, size=512) + MSR.format(off=0, size=2**50))
    raises_at(read_msr, path, 2, "Size", f"limit of {MAX_REQUEST_BYTES} bytes", "max_request_bytes")
    path = cp_file(tmp_path, f"1,10,28,{2**31},1\n")
    raises_at(read_cloudphysics, path, 2, "size", "max_request_bytes")
    assert read_cloudphysics(path, max_request_bytes=2**31)["size"].values.tolist() == [2**31]


def test_exact_integers_survive_a_dirty_block(tmp_path):
    # a blank line made pandas read Timestamp as float64 (2^53 < 1.28e17): skipped rows' neighbours were rounded
    t = 128166372003061629
    path = msr_file(tmp_path, f"{t},hm,1,Read,0,512,1\n\n{t + 3},hm,1,Read,0,512,1\n")
    ds = read_msr(path, errors="skip")
    assert ds["time"].values.tolist() == [0.0, 3e-7] and ds.attrs["n_skipped"] == 1


# ------------------------------------------------------------------------------------ params rows

@pytest.mark.parametrize(("section", "values", "key", "why"), [
    ("ara_load_balancing", {"ks": [1, 99]}, "ara_load_balancing.ks", "[99] exceed n_sites = 16"),
    ("ara_load_balancing", {"policy": {"n_sites": 8, "th_l": 7}}, "ara_load_balancing.ks", "exceed n_sites = 8"),
    ("ara_load_balancing", {"policy": {"th_l": 20}}, "ara_load_balancing.policy.th_l",
     "must be an integer in [1, n_sites=16]; got 20"),
    ("ara_load_balancing", {"th_s_grid": [1, 17]}, "ara_load_balancing.th_s_grid", "[17] exceed"),
    ("vfrm_single_vm", {"cost_flash_mb": 3}, "vfrm_single_vm.cost_flash_mb", "must be one of flash_mb"),
])
def test_cross_field_checks_run_in_params_check_and_before_every_stage(tmp_path, capsys, section, values, key, why):
    path = section_check_fails(tmp_path, capsys, section, values, key, why)
    # every stage loads the whole file before its notebook starts (any notebook, not only the section's own)
    with pytest.raises(ParamsError, match=key.replace(".", r"\.")):
        pipeline.notebook_parameters(REPO / "notebooks/00_quickstart.ipynb", path, tmp_path / "results")


def test_a_key_given_twice_names_the_key_and_both_lines(tmp_path, capsys):
    text = (REPO / "params.yaml").read_text()
    path = tmp_path / "params.yaml"
    path.write_text(text + "\nseed: 7\n")
    first = text.splitlines().index("seed: 0") + 1
    last = len(text.splitlines()) + 2
    check_fails(path, capsys, f"{path}: line {last}: key 'seed' given twice (lines {first} and {last})")
    path.write_text(text.replace("  line_bytes: 4096", "  line_bytes: 4096\n  line_bytes: 512", 1))
    check_fails(path, capsys, "key 'line_bytes' given twice")


@pytest.mark.parametrize("value", [False, 0, [], "fast", 3.5])
def test_a_section_set_to_a_non_mapping_is_an_error(tmp_path, capsys, value):
    data = repo_params()
    data["quickstart"] = value
    check_fails(write_params(tmp_path, data), capsys, "quickstart: expected a mapping of parameters")


def test_an_empty_section_takes_the_defaults(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("seed: 1\nquickstart:\n")
    assert params.load(path)["quickstart"] == params.sections()["quickstart"]()


@pytest.mark.parametrize(("where", "fragment"), [
    (("seed",), "seed: expected an integer in [0, 9223372036854775807]"),
    (("quickstart", "max_requests"), "quickstart.max_requests: expected an integer >= 0"),   # no upper bound
    (("quickstart", "reaccess_window_s"), "too large for a float64"),
])
def test_a_400_digit_number_is_an_error_naming_the_key(tmp_path, capsys, where, fragment):
    data = repo_params()
    target = data
    for k in where[:-1]:
        target = target[k]
    target[where[-1]] = int("9" * 400)
    err = check_fails(write_params(tmp_path, data), capsys, fragment)
    assert "9" * 100 not in err  # the number is named, not printed in full
    data = repo_params()
    data["quickstart"]["max_requests"] = 2**63
    check_fails(write_params(tmp_path, data), capsys, "outside the int64 range")


def test_mixed_key_types_name_the_key(tmp_path, capsys):
    path = tmp_path / "params.yaml"
    path.write_text("seed: 0\nquickstart:\n  max_requests: 10\n  7: 3\n")
    check_fails(path, capsys, "quickstart.7: parameter names are strings")
    path.write_text("seed: 0\n12: {}\n")
    check_fails(path, capsys, "12: top-level keys are strings")


def test_a_directory_or_a_binary_file_is_an_error(tmp_path, capsys):
    check_fails(tmp_path, capsys, f"{tmp_path}: is a directory")
    blob = tmp_path / "params.bin"
    blob.write_bytes(bytes(range(256)) * 4)
    check_fails(blob, capsys, f"{blob}: not a UTF-8 text file")
    nul = tmp_path / "nul.yaml"
    nul.write_bytes(b"seed: 0\n\x00\x01\n")
    check_fails(nul, capsys, "not valid YAML")


# ------------------------------------------------------------------------------------ outputs, report, cli

CHILD = r"""
import sys, time
from pathlib import Path
from tieringlab import fileio
from tieringlab.results import Outputs

out = Outputs("00_quickstart", sys.argv[1])
out.claim("vfrm.obs2.reaccess_within_5min.cloudphysics", 99.0)
real_write_text = Path.write_text

def slow_disk(self, text, *a, **k):  # a slow disk: the temporary file is half written when the kill comes
    if fileio.is_temp_name(self.name):
        real_write_text(self, text[: len(text) // 2], *a, **k)
        print("in-write", flush=True)
        time.sleep(60)
    return real_write_text(self, text, *a, **k)

Path.write_text = slow_disk
out.metric("n_requests", 113872)
"""


def test_kill_9_during_a_metrics_write(tmp_path):
    """A process killed with SIGKILL in the middle of a metrics write leaves the previous complete metrics file
    and a half-written temporary file that the report never reads; the notebook's next Outputs deletes it."""
    results = tmp_path / "results"
    metrics = results / "metrics"
    env = {**os.environ, "TIERINGLAB_PROGRESS": "0", "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(results)], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline().strip() == b"in-write"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    stale = [p for p in metrics.iterdir() if fileio.is_temp_name(p.name)]
    assert len(stale) == 1 and stale[0].name.startswith(".00_quickstart.json.tmp-") and stale[0].suffix == ".tmp"
    # what older versions left (".00_quickstart.json.tmp-xyz.json"): a name the report's glob did match
    legacy = metrics / ".00_quickstart.json.tmp-abc123.json"
    legacy.write_text('{"claims": {"half-wri')
    before = json.loads((metrics / "00_quickstart.json").read_text())  # the last complete write survives whole
    assert before["claims"] and "n_requests" not in before["values"]
    ledger = report.build(results).set_index("id")                      # the report reads only the real file
    assert ledger.loc["vfrm.obs2.reaccess_within_5min.cloudphysics", "reproduced"] == "99 %"
    Outputs("00_quickstart", results)                                    # the notebook's next run cleans up
    assert sorted(p.name for p in metrics.iterdir()) == ["00_quickstart.json"]


def test_report_on_a_results_folder_that_does_not_exist_is_an_error(tmp_path, capsys):
    missing = tmp_path / "nonexistent"
    assert cli(["report", "--results", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: no such results directory" in err
    assert not missing.exists()  # nothing created, no ledger of "not reproduced yet" rows
    assert report.main(["--results", str(missing)]) == 2
    with pytest.raises(report.ReportError, match="no such results directory"):
        report.build(missing)


def test_data_list_of_an_unknown_name_names_the_known_data_sets(capsys):
    assert cli(["data", "list", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown dataset 'nope'; known: cloudphysics, msr_mds_0" in err
    assert cli(["data", "fetch", "nope"]) == 2
    assert "known: cloudphysics" in capsys.readouterr().err
    assert cli(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("cloudphysics\tdata/cloudphysics/cloudPhysicsIO.csv\tmd5=e1101c6c26923201c2161ccddad5626f\t"
                          "sha256=987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1\t")


def test_temporary_names_are_hidden_and_end_in_tmp(tmp_path):
    with fileio.atomic_path(tmp_path / "metrics" / "x.json") as tmp:
        assert tmp.name.startswith(".x.json.tmp-") and tmp.suffix == ".tmp"
        assert fileio.is_temp_name(tmp.name) and not list((tmp_path / "metrics").glob("[!.]*.json"))
        tmp.write_text("{}")
    assert np.array_equal(sorted(p.name for p in (tmp_path / "metrics").iterdir()), ["x.json"])


def test_a_stage_run_first_removes_what_an_interrupted_run_of_it_left(tmp_path):
    results = tmp_path / "results"
    ours = [results / ".staging/00_quickstart/figures/00_quickstart/a.png",   # the staging folder
            results / "figures/.00_quickstart.old-4242/a.png",               # an output set aside mid-replace
            results / "metrics/.00_quickstart.json.tmp-abcd1234.tmp",        # fileio temporaries, new and old names
            results / "notebooks/.00_quickstart.ipynb.tmp-x1y2z3.ipynb"]
    theirs = [results / "metrics/.01_trace_characterization.json.tmp-zz.tmp",  # another stage's live write
              results / "metrics/00_quickstart.json", results / "figures/00_quickstart/a.png"]
    for p in ours + theirs:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    pipeline._remove_leftovers(results, "00_quickstart")
    assert [p for p in ours if p.exists()] == [] and not (results / ".staging/00_quickstart").exists()
    assert not (results / "figures/.00_quickstart.old-4242").exists()
    assert all(p.exists() for p in theirs)
