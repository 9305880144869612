from __future__ import annotations

import sys

from trtcheck.config.options import Options
from trtcheck.execution.run import collect
from trtcheck.status import Status
from trtcheck.zoo import discover

MODEL = """
import torch, trtcheck

@trtcheck.model(variants=("float32", "float64"), tags=("small",))
def {name}(variant):
    return torch.nn.Identity(), (torch.zeros(2, dtype=getattr(torch, variant)),)
"""


def test_finds_files_recursively_and_skips_private(make_zoo) -> None:
    root = make_zoo({
        "a.py": MODEL.format(name="a"),
        "sub/b.py": MODEL.format(name="b"),
        "_helpers.py": "",
        "conftest.py": "",
        ".hidden/c.py": MODEL.format(name="c"),
        "_private/d.py": MODEL.format(name="d"),
    })
    rels = [f.rel for f in discover.zoo_files([root])]
    assert rels == ["a", "sub/b"]


def test_same_file_name_in_two_dirs_gets_distinct_modules(make_zoo) -> None:
    root = make_zoo({"x/m.py": MODEL.format(name="one"), "y/m.py": MODEL.format(name="two")})
    loaded = [discover.load(f) for f in discover.zoo_files([root])]
    assert [d.specs[0].name for d in loaded] == ["one", "two"]
    names = {discover.module_name(f) for f in discover.zoo_files([root])}
    assert len(names) == 2


def test_zoo_root_is_importable_for_helpers(make_zoo) -> None:
    root = make_zoo({
        "_layers.py": "import torch\nclass Net(torch.nn.Identity):\n    pass\n",
        "m.py": """
            import torch, trtcheck
            from _layers import Net

            @trtcheck.model
            def net(variant):
                return Net(), (torch.ones(1),)
        """,
    })
    (result,) = [discover.load(f) for f in discover.zoo_files([root])]
    assert isinstance(result, discover.Discovered)
    assert result.specs[0].variants == ("default",)
    assert str(root) in sys.path


def test_import_error_names_file_and_line(make_zoo) -> None:
    root = make_zoo({"bad.py": "import torch\n\nraise RuntimeError('boom')\n",
                     "syntax.py": "def f(:\n"})
    results = {f.rel: discover.load(f) for f in discover.zoo_files([root])}
    bad, syntax = results["bad"], results["syntax"]
    assert isinstance(bad, discover.ImportFailure)
    assert bad.location == f"{root / 'bad.py'}:3"
    assert bad.message == "RuntimeError: boom"
    assert "Traceback" in bad.traceback
    assert isinstance(syntax, discover.ImportFailure)
    assert syntax.location == f"{root / 'syntax.py'}:1"
    assert syntax.message.startswith("SyntaxError")


def test_families_declared_in_a_loop(make_zoo) -> None:
    root = make_zoo({"fam.py": """
        import torch, trtcheck

        for width in (4, 8):
            def factory(variant, width=width):
                return torch.nn.Linear(width, width), (torch.ones(1, width),)
            trtcheck.model(factory, name=f"linear{width}")
    """})
    (result,) = [discover.load(f) for f in discover.zoo_files([root])]
    assert [s.name for s in result.specs] == ["linear4", "linear8"]


def test_collect_turns_failures_and_duplicates_into_rows(make_zoo) -> None:
    root = make_zoo({
        "ok.py": MODEL.format(name="m"),
        "dup.py": MODEL.format(name="m") + MODEL.format(name="m"),
        "broken.py": "import trtcheck\ntrtcheck.model(variants=('complex65',))(lambda v: v)\n",
        "empty.py": "X = 1\n",
    })
    c = collect(Options(paths=(root,)))
    assert [case.case_id for case in c.cases] == [
        "dup::m[float32]", "dup::m[float64]", "ok::m[float32]", "ok::m[float64]"]
    assert c.empty_files == ["empty"]
    by_id = {r.case_id: r for r in c.problems}
    broken = by_id["broken::<lambda>"]  # only this declaration: the file's others would run
    assert broken.status is Status.ERROR and broken.stage == "collect"
    assert "unknown variant 'complex65'" in broken.message
    assert "did you mean 'complex64'" in broken.message
    assert broken.location == f"{root / 'broken.py'}:2"
    dup = by_id["dup::m[float32]"]
    assert "duplicate case id" in dup.message and str(root / "dup.py") in dup.message
    assert dup.backend == "-"


HELPED = """
import torch, trtcheck
from _helpers import WIDTH

@trtcheck.model
def {name}(variant):
    import _helpers  # a factory that imports when called sees its own root's helpers too
    return torch.nn.Identity(), (torch.zeros(WIDTH, _helpers.WIDTH),)
"""


def test_two_roots_each_import_their_own_helpers(tmp_path) -> None:
    from trtcheck.zoo.cases import build, expand

    roots = []
    for name, width in (("first", 2), ("second", 3)):
        root = tmp_path / name
        root.mkdir()
        (root / "_helpers.py").write_text(f"WIDTH = {width}\n")
        (root / f"{name}.py").write_text(HELPED.format(name=name))
        roots.append(root)
    loaded = [discover.load(f) for f in discover.zoo_files(roots)]
    assert all(isinstance(d, discover.Discovered) for d in loaded)
    shapes = [build(case).args[0].shape for case in expand(loaded)]
    assert shapes == [(2, 2), (3, 3)]
    assert [build(case).args[0].shape for case in reversed(expand(loaded))] == [(3, 3), (2, 2)]


def test_a_root_inside_another_keeps_its_own_helpers(tmp_path) -> None:
    """A file named on its own is a root inside the folder named after it: the helper module
    beside it belongs to the inner root, the outer root's files import the outer helper."""
    from trtcheck.zoo.cases import build, expand

    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    for root, name, width in ((outer, "first", 2), (inner, "second", 3)):
        (root / "_helpers.py").write_text(f"WIDTH = {width}\n")
        (root / f"{name}.py").write_text(HELPED.format(name=name))
    files = list(discover.zoo_files([inner / "second.py", outer]))
    assert [(f.root, f.path.name) for f in files] == [(inner, "second.py"), (outer, "first.py")]
    loaded = [discover.load(f) for f in files]
    assert all(isinstance(d, discover.Discovered) for d in loaded)
    assert [build(case).args[0].shape for case in expand(loaded)] == [(3, 3), (2, 2)]


BAD_DECLARATIONS = """
import torch, trtcheck

def build(variant):
    return torch.nn.Identity(), (torch.zeros(2),)

trtcheck.model(build, name="ok")
trtcheck.model(build, name="string_tags", tags="llm")
trtcheck.model(build, name="string_rtol", rtol="1e-3")
trtcheck.model(build, name="typo_key", xfail={"emulte": "x"})
trtcheck.model(build, name="profile_key", xfail={"seed": "x", "emulate:seed": "y"},
               variants=("float16", "bfloat16"))

@trtcheck.model(atol=-1.0)
def negative_atol(variant):
    return build(variant)
"""


def test_bad_declarations_are_error_rows_at_their_line(make_zoo) -> None:
    root = make_zoo({"m.py": BAD_DECLARATIONS})
    collection = collect(Options(paths=(root,)))
    assert [c.case_id for c in collection.cases] == [
        "m::ok[default]", "m::profile_key[float16]", "m::profile_key[bfloat16]"]
    got = {r.case_id: (r.location, r.message) for r in collection.problems}
    where = f"{root / 'm.py'}"
    assert got == {
        "m::string_tags": (f"{where}:8", "invalid @trtcheck.model: tags must be a list of "
                           "words, got the string 'llm': write tags=('llm',)"),
        "m::string_rtol": (f"{where}:9", "invalid @trtcheck.model: rtol must be a number, "
                           "got '1e-3' (a str)"),
        "m::typo_key": (f"{where}:10", "invalid @trtcheck.model: xfail key 'emulte' names no "
                        "variant of this model, backend or profile; did you mean 'emulate'?"),
        "m::negative_atol": (f"{where}:14", "invalid @trtcheck.model: atol must be a finite "
                             "number >= 0, got -1.0"),
    }
    assert all(r.status is Status.ERROR and r.stage == "collect" for r in collection.problems)
