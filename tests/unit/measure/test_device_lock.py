"""device_lock.py: the per-device lock that keeps timing apart from other trtcheck processes."""

from __future__ import annotations

from trtcheck.measure.device_lock import lock_path


def test_every_cpu_device_shares_one_lock_and_each_gpu_has_its_own() -> None:
    assert lock_path("cpu") == lock_path("cpu:0")
    assert lock_path("cuda") == lock_path("cuda:0") != lock_path("cuda:1")


