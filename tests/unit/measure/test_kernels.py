"""What a process ran, told apart between processes: the kernels of one profiled call
(trtcheck.measure.kernels) and inductor's code hash, equal for the same code however it got
there (a compile or a cache load)."""

from __future__ import annotations

import torch

from trtcheck.backends.inductor import code_hash, normalized
from trtcheck.measure import kernels


def test_the_same_call_gives_the_same_cpu_fingerprint_and_another_op_another() -> None:
    w = torch.randn(32, 32)
    x = torch.randn(8, 32)
    first = kernels.fingerprint(lambda: torch.tanh(x @ w), "cpu")
    again = kernels.fingerprint(lambda: torch.tanh(x @ w), "cpu")
    other = kernels.fingerprint(lambda: torch.sigmoid(x @ w), "cpu")
    assert first["of"] == "CPU operators"
    assert any(name.startswith("aten::mm ") for name in first["names"]), first["names"]
    assert first["fingerprint"] == again["fingerprint"] != other["fingerprint"]


def test_a_call_that_runs_nothing_gives_the_reason_instead() -> None:
    found = kernels.fingerprint(lambda: None, "cpu")
    assert found == {"fingerprint": None, "reason": "the profiler saw no CPU operators"}


def test_a_compiled_frames_number_is_not_part_of_the_fingerprint() -> None:
    """Each process shuffles its rows, so a row's compiled frame has another number there."""
    assert kernels._FRAME.sub("N/N", "Torch-Compiled Region: 2/0") == \
        kernels._FRAME.sub("N/N", "Torch-Compiled Region: 0/0")


COMPILED = '''\
# AOT ID: ['0_inference']
from ctypes import c_void_p
# kernel path: /tmp/torchinductor_x/ab/cabc.py
# Topologically Sorted Source Nodes: [tanh], Original ATen: [aten.tanh]
cpp_fused_tanh_0 = async_compile.cpp_pybinding(['float*'], r\'\'\'
#include "/tmp/torchinductor_x/pi/cpicxudqmdsjh5cm4klbtbrvy2c3dsrbahhlnqf3lj4q6agp5kqsr.h"
extern "C" void kernel(float* out_ptr0) { out_ptr0[0] = 1; }
\'\'\')
'''


def test_the_code_hash_leaves_out_comments_paths_and_the_cache_folder(monkeypatch) -> None:
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_x")
    loaded = COMPILED.replace("# kernel path: /tmp/torchinductor_x/ab/cabc.py\n", "") \
        .replace("[tanh], Original", "[tanh_1], Original")
    assert code_hash([COMPILED]) == code_hash([loaded])
    assert "/tmp" not in normalized(COMPILED) and "kernel path" not in normalized(COMPILED)
    assert code_hash([COMPILED]) != code_hash([COMPILED.replace("= 1;", "= 2;")])
    assert code_hash([]) is None
