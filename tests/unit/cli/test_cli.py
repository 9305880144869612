"""The CLI in-process through main(argv): exit codes, messages, re-rendering."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from trtcheck.cli import main

ZOO = {
    "m.py": """
        import torch, trtcheck

        class Twice(torch.nn.Module):
            def forward(self, x):
                return x * 2

        @trtcheck.model(variants=("float32", "complex64"))
        def twice(variant):
            return Twice(), (torch.randn(3, dtype=getattr(torch, variant)),)

        @trtcheck.model(xfail="known to be broken")
        def expected(variant):
            return Twice(), (torch.ones(2),)
    """,
    "notpy.txt": "not a zoo file\n",  # not collected from the folder; refused when named
}


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_case_ids(make_zoo, capsys) -> None:
    root = make_zoo(ZOO)
    code, out, _ = run(capsys, "list", str(root))
    assert code == 0
    assert out.split() == ["m::twice[float32]", "m::twice[complex64]", "m::expected[default]"]
    code, out, _ = run(capsys, "list", str(root), "--variant", "complex64")
    assert out.split() == ["m::twice[complex64]"]


def test_run_writes_reports_and_xpass_exits_0(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "run", str(root), "--no-isolate", "--backend", "emulate",
                         "--out", str(out_dir))
    assert code == 0, out + err
    assert "[3/3] m::expected[default]  emulate:default=xpass" in out
    record = json.loads((out_dir / "results.json").read_text())
    assert [r["status"] for r in record["rows"]] == ["pass", "pass", "xpass"]
    assert (out_dir / "junit.xml").exists() and (out_dir / "report.md").exists()
    # where the time went, measured by the job (not the printer) and said on the time line
    stage_s = record["environment"]["stage_s"]
    assert {"eager", "export", "compile", "compare"} <= set(stage_s), stage_s
    assert 0 < sum(stage_s.values()) <= record["environment"]["duration_s"]
    assert "time: " in out


def test_strict_xfail_makes_xpass_fail(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo({**ZOO, "trtcheck.toml": "strict_xfail = true\n"})
    code, _, _ = run(capsys, "run", str(root), "--backend", "emulate", "--no-isolate", "--out",
                     str(tmp_path / "o"), "-k", "expected")
    assert code == 1


def test_failing_row_exits_1(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo({"bad.py": """
        import torch, trtcheck

        class Boom(torch.nn.Module):
            def forward(self, x):
                raise RuntimeError("kaput")

        trtcheck.model(lambda v: (Boom(), (torch.ones(1),)), name="boom")
    """})
    code, out, _ = run(capsys, "run", str(root), "--no-isolate", "--out", str(tmp_path / "o"))
    assert code == 1
    assert "RuntimeError: kaput" in out


@pytest.mark.parametrize("argv, needle", [
    (["run", "{zoo}/nope"], "path {zoo}/nope does not exist"),
    (["run", "{zoo}", "--backend", "tensorrtt"], "unknown backend 'tensorrtt'"),
    (["run", "{zoo}", "--variant", "complex63"], "did you mean 'complex64'"),
    (["run", "{zoo}", "-k", "a and"], "unexpected end of expression"),
    (["run", "{zoo}", "--profile", "truncate_doubles"], "did you mean 'truncate_double'"),
    (["report", "{zoo}/missing.json"], "cannot read"),
    *(([command, "{zoo}/notpy.txt"], "{zoo}/notpy.txt is not a zoo file: a zoo file is a Python "
       "file (.py) that declares models with @trtcheck.model") for command in ("run", "list", "analyze")),
    (["run"], "Missing argument"),
])
def test_usage_errors_exit_2_with_one_line(make_zoo, capsys, argv: list[str], needle: str) -> None:
    root = make_zoo(ZOO)
    code, out, err = run(capsys, *(a.format(zoo=root) for a in argv))
    assert code == 2
    assert needle.format(zoo=root) in err
    assert "Traceback" not in err + out
    assert "no backend named" not in err  # checked before the default backend is chosen


def test_nothing_selected_exits_5_unless_allowed(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv in (["run", str(empty)], ["run", str(root), "-k", "twicee"]):
        code, _, err = run(capsys, *argv, "--no-isolate", "--out", str(tmp_path / "o"), "-q")
        assert code == 5
        assert err.strip().splitlines() == [
            "trtcheck: nothing tested: no case was selected (check the paths and -k); "
            "--allow-empty accepts this"]
    assert "NOTHING TESTED" in (tmp_path / "o" / "report.md").read_text()
    code, _, _ = run(capsys, "run", str(empty), "--allow-empty", "--out", str(tmp_path / "o"))
    assert code == 0


def test_every_row_skipped_exits_5_unless_allowed(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    argv = ["run", str(root), "--backend", "tensorrt", "--device", "cpu", "--no-isolate", "-q",
            "--out", str(tmp_path / "o")]
    code, _, err = run(capsys, *argv)
    assert code == 5
    assert "nothing tested: all 3 rows were skipped" in err
    assert run(capsys, *argv, "--allow-skipped")[0] == 0
    assert run(capsys, "report", str(tmp_path / "o" / "results.json"))[0] == 0


def test_help_documents_exit_codes(capsys) -> None:
    code, out, _ = run(capsys, "run", "--help")
    assert code == 0
    assert "5 nothing tested" in " ".join(out.split())


def test_a_bad_flag_is_blamed_on_the_command_line_not_the_config(make_zoo, capsys) -> None:
    root = make_zoo({**ZOO, "pyproject.toml": "[tool.trtcheck]\ntimeout = 60\n"})
    code, _, err = run(capsys, "run", str(root), "--timeout", "0")
    assert code == 2
    assert "--timeout: must be positive, got 0" in err and "pyproject" not in err


def test_list_of_nothing_exits_5_like_run(tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "list", str(tmp_path))
    assert (code, out) == (5, "")
    assert err.strip() == ("trtcheck: nothing to list: no case was selected (check the paths "
                           "and -k)")


def test_list_and_analyze_ignore_a_baseline_they_never_read(make_zoo, tmp_path: Path,
                                                            capsys) -> None:
    root = make_zoo({**ZOO, "trtcheck.toml": 'baseline = "main-results.json"\n'})
    assert run(capsys, "list", str(root))[0] == 0
    assert run(capsys, "analyze", str(root), "--out", str(tmp_path / "a"))[0] == 0
    code, _, err = run(capsys, "run", str(root), "--out", str(tmp_path / "r"))
    assert code == 2 and "baseline: main-results.json is not a file" in err


def test_list_says_nothing_about_backends(make_zoo, capsys) -> None:
    code, out, err = run(capsys, "list", str(make_zoo(ZOO)))
    assert code == 0 and "backend" not in out + err


def test_config_typo_exits_2(make_zoo, capsys) -> None:
    root = make_zoo({**ZOO, "pyproject.toml": "[tool.trtcheck]\nbackend = ['eager']\n"})
    code, _, err = run(capsys, "run", str(root))
    assert code == 2
    assert "unknown key 'backend'; did you mean 'backends'?" in err


def test_out_naming_a_file_says_so(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(capsys, "run", str(root), "--out", str(blocker))
    assert code == 2
    assert f"{blocker} is a file, not a directory" in err


def test_a_second_run_into_the_same_out_exits_2_naming_the_holder(
        make_zoo, tmp_path: Path, capsys) -> None:
    from trtcheck.results.record import locked

    root = make_zoo(ZOO)
    out_dir = tmp_path / "out"
    with locked(out_dir):
        code, _, err = run(capsys, "run", str(root), "--out", str(out_dir), "--no-isolate")
    assert code == 2
    assert f"is in use by another trtcheck run (pid {os.getpid()})" in err
    assert not (out_dir / "results.jsonl").exists()
    assert run(capsys, "run", str(root), "--out", str(out_dir), "--backend", "emulate",
               "--no-isolate", "-q")[0] == 0
    assert not (out_dir / ".trtcheck.lock").exists()


def test_unwritable_out_dir_exits_2_before_work(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = run(capsys, "run", str(root), "--out", str(blocker / "sub"))
    assert code == 2
    assert "cannot write reports" in err
    assert "collected" not in out


def test_report_rerenders_from_record(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo(ZOO)
    out_dir = tmp_path / "out"
    run(capsys, "run", str(root), "--backend", "emulate", "--no-isolate", "--out", str(out_dir), "-q")
    original = (out_dir / "report.md").read_text()
    (out_dir / "report.md").unlink()
    (out_dir / "junit.xml").unlink()
    code, _out, _ = run(capsys, "report", str(out_dir / "results.json"))
    assert code == 0
    assert (out_dir / "report.md").read_text() == original
    assert (out_dir / "junit.xml").exists()


def test_analyze_prints_paths_and_writes_analysis(make_zoo, tmp_path: Path, capsys) -> None:
    root = make_zoo({**ZOO, "ids.py": """
        import torch, trtcheck

        class Hash(torch.nn.Module):
            def forward(self, ids):
                return ids * 1_000_003

        @trtcheck.model(variants=("int64",))
        def hashed(variant):
            return Hash(), (torch.tensor([1, 2**33]),)

        @trtcheck.model
        def unbuildable(variant):
            raise RuntimeError("no weights here")
    """})
    code, out, _ = run(capsys, "analyze", str(root), "--out", str(tmp_path / "o"))
    assert code == 1  # the unbuildable factory is an error row
    lines = {line.split()[0]: line for line in out.splitlines() if "::" in line}
    assert "complex rewrite" in lines["m::twice[complex64]"]
    assert "1 input values beyond int32" in lines["ids::hashed[int64]"]
    assert "RuntimeError: no weights here" in lines["ids::unbuildable[default]"]
    saved = json.loads((tmp_path / "o" / "analysis.json").read_text())
    assert saved["analyses"]["ids::hashed[int64]"]["path"] == ["int64"]
    assert saved["analyses"]["m::twice[float32]"]["path"] == []


SLOW_TWO_FILES = {
    "a.py": """
        import time, torch, trtcheck

        @trtcheck.model
        def slow(variant):
            time.sleep(2.5)
            return torch.nn.Identity(), (torch.ones(2),)
    """,
    "b.py": """
        import torch, trtcheck

        @trtcheck.model(variants=("float32", "float64"))
        def quick(variant):
            return torch.nn.Identity(), (torch.ones(2, dtype=getattr(torch, variant)),)
    """,
}


def test_ci_logs_fold_each_file_and_say_what_is_still_running(
        make_zoo, tmp_path: Path, capsys, monkeypatch) -> None:
    import trtcheck.cli.progress

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github_output"))
    monkeypatch.setattr(trtcheck.cli.progress, "STILL_RUNNING_EVERY_S", 1.0)
    code, out, _ = run(capsys, "run", str(make_zoo(SLOW_TWO_FILES)), "--backend", "eager",
                       "--no-isolate", "--out", str(tmp_path / "o"))
    assert code == 0
    lines = out.splitlines()
    assert any(line.startswith("still running: a::slow[default]: build ") for line in lines)
    fold_a = lines.index("::group::a.py (1 cases)")
    assert lines[fold_a + 1].startswith("[1/3] a::slow[default]  eager=pass")
    assert lines[fold_a + 2] == "::endgroup::"
    fold_b = lines.index("::group::b.py (2 cases)")
    assert [line.split()[1] for line in lines[fold_b + 1:fold_b + 3]] == [
        "b::quick[float32]", "b::quick[float64]"]
    assert lines[fold_b + 3] == "::endgroup::"


def test_quiet_prints_no_progress(make_zoo, tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "run", str(make_zoo(SLOW_TWO_FILES)), "--backend", "eager",
                       "--no-isolate", "-q", "--out", str(tmp_path / "o"))
    assert code == 0 and out == "PASS: 3 rows, none fails the run\n"


MIXED = {"m.py": """
    import torch, trtcheck

    class Boom(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("kaput")

    trtcheck.model(lambda v: (Boom(), (torch.ones(1),)), name="boom")
    trtcheck.model(lambda v: (torch.nn.Identity(), (torch.ones(1),)), name="fine")
    trtcheck.model(lambda v: (Boom(), (torch.ones(1),)), name="known", xfail="broken")
"""}


def test_quiet_still_prints_the_failing_rows_and_the_verdict(make_zoo, tmp_path: Path, capsys) -> None:
    code, out, err = run(capsys, "run", str(make_zoo(MIXED)), "--backend", "eager", "--no-isolate",
                         "-q", "--out", str(tmp_path / "o"))
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[2:-2]] == [["error", "m::boom[default]"]]  # no xfail
    assert "RuntimeError: kaput" in lines[2]
    assert lines[-1] == "FAIL: 1 of 3 rows fail the run"


def test_verbose_adds_a_line_per_stage(make_zoo, tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "run", str(make_zoo(MIXED)), "--backend", "eager", "--no-isolate",
                       "-v", "-k", "fine", "--out", str(tmp_path / "o"))
    assert code == 0
    stages = [line.split(": ", 1)[1] for line in out.splitlines()
              if line.startswith("    m::fine[default]: ")]
    assert stages[:4] == ["build", "eager", "compare", "export"]
    assert {"compile (eager)", "run (eager)", "timing (eager)"} <= set(stages)


def test_resume_with_other_options_exits_2_naming_the_option(make_zoo, tmp_path: Path, capsys) -> None:
    root, out_dir = make_zoo(MIXED), tmp_path / "o"
    run(capsys, "run", str(root), "--backend", "eager", "--no-isolate", "--out", str(out_dir))
    before = (out_dir / "results.json").read_text()
    code, _out, err = run(capsys, "run", str(root), "--backend", "emulate", "--no-isolate",
                         "--out", str(out_dir), "--resume")
    assert code == 2
    assert err.strip() == (f"trtcheck: error: --resume: {out_dir / 'results.jsonl'} was written with "
                           "backends = ['eager'], this run has backends = ['emulate']; resume with "
                           "the same options, or leave out --resume to start over")
    assert (out_dir / "results.json").read_text() == before  # nothing mixed in
    code, _, err = run(capsys, "run", str(root), "--backend", "eager", "--no-isolate", "-k", "fine",
                       "--out", str(out_dir), "--resume")
    assert code == 2 and "keyword = None, this run has keyword = 'fine'" in err
    code, _, err = run(capsys, "run", str(root), "--backend", "eager", "--no-isolate", "--nan",
                       "fail", "--out", str(out_dir), "--resume")  # it judges rows otherwise
    assert code == 2 and "nan = 'warn', this run has nan = 'fail'" in err


def test_resume_says_how_many_cases_it_reused(make_zoo, tmp_path: Path, capsys) -> None:
    root, out_dir = make_zoo(MIXED), tmp_path / "o"
    run(capsys, "run", str(root), "--backend", "eager", "--no-isolate", "--out", str(out_dir))
    journal = out_dir / "results.jsonl"
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join(line for line in lines if '"m::fine[default]"' not in line) + "\n")
    code, out, _ = run(capsys, "run", str(root), "--backend", "eager", "--no-isolate",
                       "--out", str(out_dir), "--resume", "--workers", "1")
    assert code == 1
    assert f"resumed: 2 of 3 cases reused from {journal}, 1 run" in out.splitlines()
    assert json.loads((out_dir / "results.json").read_text())["environment"]["resumed"] == {
        "reused": 2, "cases": 3}


def test_a_full_disk_while_journalling_says_so_once_and_writes_the_reports(
        make_zoo, tmp_path: Path, capsys, monkeypatch) -> None:
    import errno

    from trtcheck.results import record

    class Filling:
        """The journal's file on a disk with room for two more lines."""

        def __init__(self, fh) -> None:
            self.fh, self.room = fh, 2

        def write(self, text: str) -> int:
            if self.room == 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.room -= 1
            return self.fh.write(text)

        def __getattr__(self, name: str):
            return getattr(self.fh, name)

    opened = record.Journal.__init__

    def journal(self, *args, **kwargs) -> None:
        opened(self, *args, **kwargs)
        self._fh = Filling(self._fh)

    monkeypatch.setattr(record.Journal, "__init__", journal)
    out_dir = tmp_path / "o"
    code, _out, err = run(capsys, "run", str(make_zoo(MIXED)), "--backend", "eager", "--no-isolate",
                         "--out", str(out_dir))
    assert code == 3
    [message] = err.splitlines()
    assert message == (f"trtcheck: error: cannot write {out_dir / 'results.jsonl'}: No space left on "
                       "device: the run stopped with 2 of 3 rows done; reports written: results.json, "
                       "junit.xml, report.md, comment.md, report.html (the rows that finished); --resume "
                       "runs the rest once there is room")
    saved = json.loads((out_dir / "results.json").read_text())
    assert [(r["case_id"], r["status"]) for r in saved["rows"]] == [
        ("m::boom[default]", "error"), ("m::fine[default]", "pass"), ("m::known[default]", "skipped")]
    assert saved["rows"][2]["message"].startswith("not run: the run stopped, cannot write")
    assert (out_dir / "junit.xml").exists() and (out_dir / "report.md").exists()


def test_reports_that_cannot_be_written_are_named_and_the_others_written(
        make_zoo, tmp_path: Path, capsys, monkeypatch) -> None:
    import errno

    from trtcheck.results import record

    real = record.write_atomic

    def write_atomic(path, text):
        if path.name == "report.md":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, text)

    monkeypatch.setattr("trtcheck.render.write_atomic", write_atomic)
    out_dir = tmp_path / "o"
    code, _, err = run(capsys, "run", str(make_zoo(MIXED)), "--backend", "eager", "--no-isolate",
                       "--out", str(out_dir))
    assert code == 3
    assert err.strip() == (f"trtcheck: error: cannot write report.md (No space left on device) in "
                           f"{out_dir}; written: results.json, junit.xml, comment.md, report.html")
    assert (out_dir / "junit.xml").exists() and not (out_dir / "report.md").exists()


def test_list_takes_a_file_named_twice_once(make_zoo, capsys) -> None:
    root = make_zoo(ZOO)
    code, out, err = run(capsys, "list", str(root / "m.py"), str(root))
    assert code == 0 and err == ""
    assert out.split() == ["m::twice[float32]", "m::twice[complex64]", "m::expected[default]"]


def test_report_takes_a_report_directory(make_zoo, tmp_path: Path, capsys) -> None:
    out_dir = tmp_path / "o"
    run(capsys, "run", str(make_zoo(ZOO)), "--no-isolate", "--backend", "eager", "--out", str(out_dir))
    (out_dir / "report.md").unlink()
    code, _out, _ = run(capsys, "report", str(out_dir))
    assert code == 0 and (out_dir / "report.md").exists()
    (out_dir / "results.json").unlink()  # a run that stopped: its journal
    code, _out, _ = run(capsys, "report", str(out_dir))
    assert code == 0 and (out_dir / "results.json").exists()
    code, _, err = run(capsys, "report", str(tmp_path))
    assert code == 2 and "without results.json or results.jsonl" in err


def test_fetch_names_its_argument_without_braces(capsys) -> None:
    code, _, err = run(capsys, "fetch", "tensorrt")
    assert code == 2
    assert "Invalid value for 'PACKAGE': 'tensorrt' is not 'torch-tensorrt'" in err
    assert "{" not in err
def test_the_time_line_says_where_a_runs_time_went() -> None:
    from trtcheck.cli.common import time_line

    env = {"duration_s": 40.0, "stage_s": {"compile": 20.0, "timing": 8.0, "export": 0.01}}
    assert time_line(env) == ("time: 40.0 s: compile 20.0 s (50%), timing 8.0 s (20%), "
                              "outside stages 12.0 s")
    assert time_line({}) == "time: 0.0 s"
