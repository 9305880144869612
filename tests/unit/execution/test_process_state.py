"""Each case starts where a fresh process starts, whatever ran before it in the worker; each row
where its eager call ran (trtcheck/execution/process_state.py)."""

from __future__ import annotations

import pytest
import torch

from trtcheck.backends import get
from trtcheck.config.options import Options
from trtcheck.config.timing import Timing
from trtcheck.execution import process_state
from trtcheck.execution.case import iter_rows
from trtcheck.execution.run import collect
from trtcheck.results.rows import Row
from trtcheck.status import Status

# Ten nn.Sequential models: torch.compile traces Sequential.forward for each, so without a reset
# the second is a recompile of the first one's frame, with its input marked dynamic. Their
# layers lower to extern kernels, so inductor generates a Python wrapper and compiles no C++.
WIDTHS = (8, 12, 16, 20, 24, 28, 32, 40, 48)
ZOO = """
import torch, trtcheck

{models}
"""
LINEAR = """
@trtcheck.model
def linear_{w}(variant):
    return torch.nn.Sequential(torch.nn.Linear({w}, {w})), (torch.randn(3, {w}),)
"""
CONV = """
@trtcheck.model
def conv(variant):
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3)), (torch.randn(1, 3, 9, 9),)
"""


def _run(root, order: list[str], device: str) -> dict[str, Row]:
    """The zoo's cases run in ``order`` in this process, one after the other, on inductor (on
    CUDA with the kernels of one more call fingerprinted)."""
    opts = Options(paths=(root,), devices=(device,), backends=("inductor",), dtype_drift=False,
                   timing=Timing(warmup=1, repeats=2, warmup_s=0.0, min_time_s=0.0),
                   kernels=device == "cuda")
    cases = {c.spec.name: c for c in collect(opts).cases}
    rows = {}
    for name in order:
        [row] = [r for r in iter_rows(cases[name], opts, {"inductor": get("inductor")})
                 if isinstance(r, Row)]
        rows[name] = row
    return rows


def _kernels(row: Row) -> object:
    return (row.evidence.details.get("kernels") or {}).get("backend", {}).get("fingerprint")


@pytest.mark.slow
@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[
    pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")])])
def test_every_row_gets_the_code_it_gets_alone_in_any_case_order(make_zoo, device: str) -> None:
    names = ["conv", *(f"linear_{w}" for w in WIDTHS)]
    root = make_zoo({"m.py": ZOO.format(models=CONV + "".join(LINEAR.format(w=w) for w in WIDTHS))})
    forward = _run(root, names, device)
    backward = _run(root, names[::-1], device)
    hashes = {name: row.evidence.details.get("code_hash") for name, row in forward.items()}
    for name in names:
        assert forward[name].status is backward[name].status is Status.PASS, name
        assert hashes[name], f"{name}: {forward[name].message}"  # inductor compiled its own code
        assert backward[name].evidence.details.get("code_hash") == hashes[name], name
        if device == "cuda":  # the same kernels ran, whatever case ran before
            assert _kernels(forward[name]) and _kernels(backward[name]) == _kernels(forward[name])
    # a dynamic recompile would share one kernel between widths, or give none
    assert len(set(hashes.values())) == len(names)


def test_a_case_that_changes_global_settings_leaves_the_next_case_a_fresh_start() -> None:
    fresh = process_state.take()
    before = (torch.get_default_dtype(), torch.is_grad_enabled(), torch.get_num_threads())
    torch.manual_seed(7)
    drawn = torch.rand(3)
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.set_num_threads(1 if before[2] != 1 else 2)
    try:
        fresh.restore()
        assert (torch.get_default_dtype(), torch.is_grad_enabled(), torch.get_num_threads()) \
            == before
        torch.manual_seed(7)
        after_seed = process_state.take()  # the random state of a row's eager call
        torch.rand(100)
        after_seed.restore()  # each row starts from the random state eager ran in
        assert torch.equal(torch.rand(3), drawn)
    finally:
        torch.set_default_dtype(before[0])
        torch.set_grad_enabled(before[1])
        torch.set_num_threads(before[2])


def test_dynamo_config_is_put_back_and_only_what_changed_is_written() -> None:
    import torch._dynamo.config as config

    fresh = process_state.take()
    limit = config.recompile_limit
    config.recompile_limit = limit + 3
    try:
        fresh.restore()
        assert config.recompile_limit == limit
    finally:
        config.recompile_limit = limit
