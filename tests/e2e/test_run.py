"""End to end: the CLI in a subprocess on temp directories, as a user runs it."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers import REPO, Ran, rows, start_trtcheck, trtcheck, trtcheck_command

ZOOS = REPO / "tests" / "zoos"


def test_sample_zoo_runs_clean(tmp_path: Path) -> None:
    out = tmp_path / "report"
    proc = trtcheck("run", "fixtures/", "--out", str(out))
    # Through Torch-TensorRT's converters (lowering's default), id_hash[int64] fails to compile:
    # 2.13.0's to_torch builds the Python int 2**40 + 15 as an int32 constant, which torch
    # refuses (at the graph level, dryrun, the row passed). The sample zoo declares it xfail.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    record = rows(out)
    testcases = ET.parse(out / "junit.xml").getroot().iter("testcase")
    assert len(list(testcases)) == len(record) > 10
    narrowed = [r for r in record if r["case_id"] == "indices::id_hash[int64]" and r["backend"] == "lowering"]
    for r in narrowed:
        assert r["status"] == "xfail", r
        assert "value cannot be converted to type int32 without overflow, while executing " \
               "%remainder = aten.remainder.Scalar(" in r["message"], r["message"]
        assert "(raised inside Torch-TensorRT at torch_tensorrt/dynamo/conversion/" \
               "converter_utils.py:" in r["message"], r["message"]
    assert narrowed or "lowering" not in {r["backend"] for r in record}
    assert {r["status"] for r in record} <= {"pass", "xfail", "unsupported"}
    # The only unsupported rows are the float64 and complex128 cases: TensorRT has no FP64.
    assert all("TensorRT has no FP64" in r["message"]
               for r in record if r["status"] == "unsupported")
    assert {r["backend"] for r in record} <= {"lowering", "emulate"}  # no GPU: a prediction
    report = (out / "report.md").read_text()
    assert "## Accuracy" in report
    # Without a GPU, the banner's reason is the device, with no advice to install anything.
    assert "(the tensorrt backend needs a CUDA device; this run uses cpu)" in proc.stderr
    assert "pip install" not in proc.stderr
    assert "emulate predicts" not in report  # lowering ran, not emulate


FOREIGN = {
    "audio/spectra.py": '''
        import torch
        import trtcheck

        class Filter(torch.nn.Module):
            def forward(self, spec, gain):
                return torch.view_as_real(spec * gain)

        @trtcheck.model(variants=("complex64", "complex128"))
        def spectral_filter(variant):
            dtype = getattr(torch, variant)
            return Filter(), (torch.randn(2, 33, dtype=dtype), torch.randn(33, dtype=dtype))
    ''',
    "recsys/ids.py": '''
        import torch
        import trtcheck

        class Lookup(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = torch.nn.Embedding(50, 4)

            def forward(self, ids):
                return self.emb(ids), ids + 1

        @trtcheck.model(variants=("int64",))
        def lookup(variant):
            return Lookup(), (torch.randint(0, 49, (3, 5)),)

        class Broken(torch.nn.Module):
            def forward(self, ids):
                return ids.view(7, 7)

        @trtcheck.model(variants=("int64",))
        def broken(variant):
            return Broken(), (torch.arange(10),)
    ''',
    "needs_missing_dep.py": '''
        import torch
        import not_a_real_package
    ''',
}


def test_foreign_zoo_gets_one_correct_row_per_case(make_zoo, tmp_path: Path) -> None:
    root = make_zoo(FOREIGN)
    out = tmp_path / "out"
    proc = trtcheck("run", str(root), "--out", str(out), "--backend", "emulate",
                    "--profile", "truncate_double", cwd=tmp_path)
    assert proc.returncode == 1
    got = {r["case_id"]: r for r in rows(out)}
    assert {k: v["status"] for k, v in got.items()} == {
        "needs_missing_dep::(collect)": "error",
        "audio/spectra::spectral_filter[complex64]": "pass",
        "audio/spectra::spectral_filter[complex128]": "pass",
        "recsys/ids::lookup[int64]": "pass",
        "recsys/ids::broken[int64]": "error",
    }
    missing = got["needs_missing_dep::(collect)"]
    assert missing["location"] == f"{root / 'needs_missing_dep.py'}:3"
    assert "No module named 'not_a_real_package'" in missing["message"]
    broken = got["recsys/ids::broken[int64]"]
    assert broken["stage"] == "eager"
    assert broken["location"] == f"{root / 'recsys/ids.py'}:19"
    assert "Traceback" in broken["traceback"] and "Traceback" not in broken["message"]
    lookup = got["recsys/ids::lookup[int64]"]
    assert [o["dtype"] for o in lookup["outputs"]] == ["torch.float32", "torch.int64"]


SECOND_WEEK = {"hashing.py": """
    import torch
    import trtcheck

    class Modulo(torch.nn.Module):
        def forward(self, ids):
            return (ids * 31) % (2**40)

    @trtcheck.model(variants=("int64",), xfail={"int64_as_int32": "ids wrap in int32"})
    def modulo(variant):
        return Modulo(), (torch.arange(8) * 1000,)
"""}


def test_profiles_that_do_not_apply_and_wrapped_constants_say_why(make_zoo, tmp_path: Path) -> None:
    """int64 = "int32" asks nothing of Torch-TensorRT 2.13: lowering's row is skipped, saying
    so, not an xpass; under emulate the constant 2**40 wraps to 0 and the error says so. The
    latency note says how the rows were timed: each call on its own, one clock on a CPU.
    Through the converters (lowering's default) the default row is an error: 2.13.0's to_torch
    builds the Python int 2**40 as an int32 constant, which torch refuses (it passed at the graph
    level, where no converter ran)."""
    out = tmp_path / "out"
    proc = trtcheck("run", str(make_zoo(SECOND_WEEK)), "--out", str(out), "--device", "cpu",
                    "--backend", "eager", "--backend", "emulate", "--backend", "lowering",
                    "--profile", "default", "--profile", "int64_as_int32", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    got = {(r["backend"], r["profile"]): r for r in rows(out)}
    assert "converter_utils.py:" in got["lowering", "default"]["message"]
    assert {k: r["status"] for k, r in got.items()} == {
        ("eager", "-"): "pass", ("emulate", "default"): "pass", ("lowering", "default"): "error",
        ("emulate", "int64_as_int32"): "xfail", ("lowering", "int64_as_int32"): "skipped"}
    assert got["lowering", "int64_as_int32"]["message"].startswith(
        'not applicable: int64 = "int32" does not apply: Torch-TensorRT 2.13 runs int64 natively')
    assert ("int64 constants outside the int32 range wrap under int64 = \"int32\", as TensorRT "
            "truncates them: 1099511627776 → 0 in node") in got["emulate", "int64_as_int32"]["message"]
    latency = (out / "report.md").read_text().split("## Latency")[1].split("\n## ")[0]
    assert "| eager median ms | backend median ms | speedup" in latency and "(device)" not in latency
    assert "each call timed on its own with `perf_counter`" in latency and "block" not in latency


EXPECTED_FAULTS = {
    "faults/broken_import::(collect)": ("error", "ImportError: this zoo file needs a package"),
    "faults/crashes::segfault[default]": ("crash", "worker killed by SIGSEGV in stage eager"),
    "faults/crashes::abort[default]": ("crash", "worker killed by SIGABRT in stage eager"),
    "faults/crashes::exit[default]": ("crash", "worker exited with code 3 in stage eager"),
    "faults/crashes::hang[default]": ("timeout", "timed out after 15 s in stage eager"),
    "faults/crashes::huge_allocation[default]": ("error", "out of memory: "),
    "faults/names::a|b[default]": ("pass", ""),
    "faults/names::<b>x</b>[default]": ("pass", ""),
    "faults/names::$(touch pwned)[default]": ("pass", ""),
    "faults/names::hostile_message[default]": ("error", "RuntimeError: <script>"),
    "faults/stages::raises_in_factory[default]": ("error", "ValueError: factory broke"),
    "faults/stages::returns_a_module_only[default]": ("error", "BuildError: factory must return"),
    "faults/stages::raises_in_forward[default]": ("error", "RuntimeError: forward broke"),
    "faults/stages::not_exportable[default]": ("error", ""),
    "faults/stages::nan_outputs[default]": ("pass", ""),
    "faults/stages::input_mutation[default]": ("pass", ""),
    "faults/stages::non_tensor_output[default]": ("pass", ""),
    "faults/stages::returns_a_string[default]":
        ("error", "TypeError: the model returned str, not a tensor or a structure of tensors"),
    "faults/stages::returns_a_size[default]":
        ("error", "TypeError: the model returned int, not a tensor or a structure of tensors"),
}
STAGES = {"raises_in_factory": "build", "returns_a_module_only": "build",
          "raises_in_forward": "eager", "not_exportable": "export", "returns_a_string": "compare",
          "returns_a_size": "compare"}


def _comparable(row: dict) -> dict:
    """What must not change when a healthy model runs beside faulty ones (timings may)."""
    return {k: row[k] for k in ("case_id", "backend", "profile", "status", "message", "outputs")}


HOLD_EXCLUSIVE = """
import sys, time
from trtcheck.measure.device_lock import lock_for
with lock_for("cpu").exclusive():
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
"""


def test_waiting_for_another_trtcheck_on_the_device_is_not_the_cases_time(tmp_path: Path,
                                                                          make_zoo) -> None:
    """Another process times on the CPU for 6 s; a case with a 3 s timeout waits, then passes."""
    zoo = make_zoo({"m.py": """
        import torch, trtcheck

        @trtcheck.model()
        def relu(variant):
            return torch.nn.ReLU(), (torch.randn(4),)
        """})
    busy = subprocess.Popen([sys.executable, "-c", HOLD_EXCLUSIVE, "6"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert busy.stdout is not None and busy.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        proc = trtcheck("run", str(zoo), "--out", str(tmp_path / "out"), "--device", "cpu",
                        "--backend", "eager", "--timeout", "3", cwd=tmp_path)
        assert time.monotonic() - t0 > 3 and busy.poll() == 0  # it did wait for the other
    finally:
        busy.wait()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["status"] for r in rows(tmp_path / "out")] == ["pass"]


@pytest.mark.slow
def test_fault_injection(fault_zoo: Ran, tmp_path: Path) -> None:
    assert fault_zoo.returncode == 1, fault_zoo.stdout + fault_zoo.stderr
    assert not (fault_zoo.folder / "pwned").exists()
    got = [r for r in fault_zoo.rows() if r["case_id"].startswith(("faults/", "healthy/"))]
    eager = {r["case_id"]: r for r in got if r["backend"] in ("eager", "-")}
    faults = {k: v for k, v in eager.items() if k.startswith("faults/")}
    assert {k: (v["status"], v["message"][:len(EXPECTED_FAULTS[k][1])]) for k, v in faults.items()} \
        == EXPECTED_FAULTS
    for name, stage in STAGES.items():
        assert faults[f"faults/stages::{name}[default]"]["stage"] == stage
    # A model that returns no tensor: the same error row on every backend.
    for name in ("returns_a_string", "returns_a_size"):
        found = [(r["backend"], r["status"], r["stage"], r["message"]) for r in got
                 if r["case_id"] == f"faults/stages::{name}[default]"]
        assert {backend for backend, *_ in found} == {"eager", "emulate"}
        assert len({tuple(f[1:]) for f in found}) == 1, found
    # Every case has one row per backend, even the ones that took the worker down.
    assert len(got) == 1 + 2 * (len(EXPECTED_FAULTS) - 1) + 2 * 5
    alone = tmp_path / "alone"
    trtcheck("run", str(ZOOS / "healthy"), "--out", str(alone), "--device", "cpu",
             "--backend", "eager", "--backend", "emulate", cwd=tmp_path)
    healthy = [_comparable(r) for r in got if r["case_id"].startswith("healthy/")]
    assert healthy == [{**_comparable(r), "case_id": "healthy/" + r["case_id"]} for r in rows(alone)]
    # float64 and complex128 under emulate's default profile: TensorRT has no FP64.
    assert all(r["status"] == "pass" or (r["status"] == "unsupported" and r["backend"] == "emulate"
                                         and r["case_id"].endswith(("[float64]", "[complex128]")))
               for r in healthy)


def _journalled_rows(journal: Path) -> int:
    """Rows in a results.jsonl so far (not its header or case analyses)."""
    if not journal.exists():
        return 0
    return sum('"status": ' in line for line in journal.read_text().splitlines()[1:])


SLOW_ZOO = {"m.py": """
    import time
    import torch, trtcheck

    class Slow(torch.nn.Module):
        def __init__(self, delay):
            super().__init__()
            self.delay = delay

        def forward(self, x):
            time.sleep(self.delay)
            return x + 1

    for i in range(3):
        trtcheck.model(lambda v: (Slow(0.0), (torch.ones(2),)), name=f"quick{i}")
    trtcheck.model(lambda v: (Slow(600.0), (torch.ones(2),)), name="stuck")
"""}


@pytest.mark.slow
def test_sigkill_loses_nothing_and_resume_skips_recorded(make_zoo, tmp_path: Path) -> None:
    root = make_zoo(SLOW_ZOO)
    out = tmp_path / "out"
    proc = start_trtcheck("run", root, "--out", out, "--backend", "eager",
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if _journalled_rows(journal) >= 3:
            break
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "results.json").exists()

    rebuilt = trtcheck("report", str(journal))
    assert rebuilt.returncode == 0, rebuilt.stderr
    finished = {r["case_id"]: r for r in rows(out)}
    assert set(finished) == {f"m::quick{i}[default]" for i in range(3)}
    assert ET.parse(out / "junit.xml").getroot().find(".//testcase") is not None

    resumed = trtcheck("run", str(root), "--out", str(out), "--backend", "eager", "--resume",
                       "--timeout", "10")
    assert resumed.returncode == 1
    final = {r["case_id"]: r for r in rows(out)}
    assert final["m::stuck[default]"]["status"] == "timeout"
    for case_id, row in finished.items():
        assert final[case_id]["timings"] == row["timings"], "recorded case was run again"


@pytest.mark.slow
def test_sigterm_renders_what_finished(make_zoo, tmp_path: Path) -> None:
    root = make_zoo(SLOW_ZOO)
    out = tmp_path / "out"
    proc = start_trtcheck("run", root, "--out", out, "--backend", "eager",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if _journalled_rows(journal) >= 3:
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted" in err
    final = {r["case_id"]: r["status"] for r in rows(out)}
    assert final == {"m::quick0[default]": "pass", "m::quick1[default]": "pass",
                     "m::quick2[default]": "pass", "m::stuck[default]": "skipped"}


BUILD_LOG_ZOO = {"m.py": """
    import os, time
    import torch, trtcheck

    class AddOne(torch.nn.Module):
        def forward(self, x):
            return x + 1

    def slow_factory(name):
        def build(variant):
            with open(os.environ["BUILD_LOG"], "a") as fh:
                fh.write(name + "\\n")
            time.sleep(1.5)
            return AddOne(), (torch.ones(2),)
        return build

    for i in range(4):
        trtcheck.model(slow_factory(f"c{i}"), name=f"c{i}")
"""}


@pytest.mark.slow
def test_sigterm_then_resume_finishes_every_case_and_only_those(make_zoo, tmp_path: Path) -> None:
    root = make_zoo(BUILD_LOG_ZOO)
    out, log = tmp_path / "out", tmp_path / "built.txt"
    argv = ["run", root, "--out", out, "--backend", "eager"]
    env = {**os.environ, "BUILD_LOG": str(log)}
    proc = start_trtcheck(*argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _journalled_rows(out / "results.jsonl") < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "INTERRUPTED: the run was stopped" in stdout
    assert "**Result: INTERRUPTED**" in (out / "report.md").read_text()
    assert "INTERRUPTED" in (out / "comment.md").read_text()
    assert trtcheck("report", str(out / "results.json")).returncode == 130
    first = {r["case_id"]: r["status"] for r in rows(out)}
    done = {c for c, s in first.items() if s == "pass"}
    assert done and len(done) < 4 and set(first.values()) == {"pass", "skipped"}

    log.write_text("")
    resumed = trtcheck(*argv, "--resume", env=env, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = {r["case_id"]: r["status"] for r in rows(out)}
    assert final == {f"m::c{i}[default]": "pass" for i in range(4)}
    rerun = {f"m::{name}[default]" for name in log.read_text().split()}
    assert rerun == set(final) - done


def test_a_closed_stdout_still_writes_every_report_from_a_folder_holding_trtcheck(
        tmp_path: Path) -> None:
    """The console script, its stdout closed after one line, run from a folder that holds a
    ``trtcheck/`` folder (e.g. the natural ``--out trtcheck``): every report is written, and the
    package run is the installed one. One run for both."""
    (tmp_path / "trtcheck").mkdir()
    (tmp_path / "trtcheck" / "results.json").write_text("{}")
    out = tmp_path / "trtcheck"
    proc = subprocess.run(
        shlex.join(trtcheck_command("run", ZOOS / "healthy", "--backend", "eager", "--out", "trtcheck",
                                    script=True)) + " | head -1; exit ${PIPESTATUS[0]}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=tmp_path,
        timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("collected ")
    assert {"results.json", "junit.xml", "report.md", "comment.md", "report.html"} <= {
        p.name for p in out.iterdir()}
    assert "Traceback" not in proc.stderr
    assert {r["status"] for r in rows(out)} == {"pass"}


def test_analyze_sends_torch_noise_to_its_log(make_zoo, tmp_path: Path) -> None:
    root = make_zoo({"noisy.py": """
        import warnings
        import torch, trtcheck

        class Noisy(torch.nn.Module):
            def forward(self, x):
                warnings.warn("a warning from inside export")
                print("GRAPH DUMP")
                return x + 1

        @trtcheck.model
        def noisy(variant):
            return Noisy(), (torch.ones(2),)
    """})
    out = tmp_path / "out"
    proc = trtcheck("analyze", str(root), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "GRAPH DUMP" not in proc.stdout + proc.stderr
    assert "a warning from inside export" not in proc.stdout + proc.stderr
    assert "noisy::noisy[default]" in proc.stdout
    log = (out / "analyze.log").read_text()
    assert "GRAPH DUMP" in log and "a warning from inside export" in log
