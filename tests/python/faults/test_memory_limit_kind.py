"""Which limit bounds a check worker's memory, and why that choice leaves CUDA alone.

CUDA reserves far more address space than any memory limit (``PROT_NONE``, never touched), so a
worker under ``RLIMIT_AS`` cannot start a CUDA context. ``worker_guard.limit_kind`` picks
``RLIMIT_DATA`` where it counts what tensors use and not those reservations (Linux >= 4.7),
``RLIMIT_AS`` only where no NVIDIA device is present, and nothing otherwise. The decision is tested
as a function; the premise is tested on this kernel in a real process: under the worker's limit a
CUDA-sized ``PROT_NONE`` reservation succeeds while a writable allocation over the limit fails.
No GPU was used: that a CUDA context starts under ``RLIMIT_DATA`` is not shown here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from support.faults import FAULT_MEMORY_LIMIT, limited_command
from torchdoctor.checks import worker_guard
from torchdoctor.checks.worker_guard import limit_kind


@pytest.mark.parametrize(
    "platform, release, nvidia, expected",
    [
        ("linux", "6.18.44-fc-v1045", False, "RLIMIT_DATA"),
        ("linux", "6.8.0-45-generic", True, "RLIMIT_DATA"),  # CUDA's reservations are not data
        ("linux", "4.7.0", True, "RLIMIT_DATA"),
        ("linux", "4.19.0-26-amd64", True, "RLIMIT_DATA"),  # 19 > 7 as a number, not as text
        ("linux", "4.4.0-210-generic", False, "RLIMIT_AS"),  # RLIMIT_DATA counted brk only
        ("linux", "4.4.0-210-generic", True, None),  # RLIMIT_AS would break CUDA: no limit
        ("linux", "3.10.0-1160.el7.x86_64", True, None),
        ("linux", "not a version", False, "RLIMIT_AS"),  # unknown: taken as old
        ("darwin", "23.1.0", False, "RLIMIT_AS"),
        ("freebsd14", "14.0-RELEASE", True, None),
    ],
)
def test_limit_kind(platform: str, release: str, nvidia: bool, expected):
    assert limit_kind(platform, release, nvidia) == expected


PROBE = r"""
import ctypes, json, os, resource, sys
from torchdoctor.checks import worker_guard
worker_guard.install()
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
PRIVATE, ANONYMOUS, NORESERVE = 0x02, 0x20, 0x4000
def reserve(size, prot):
    p = libc.mmap(None, size, prot, PRIVATE | ANONYMOUS | NORESERVE, -1, 0)
    return p not in (None, ctypes.c_void_p(-1).value)
print(json.dumps({
    "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
    "as": resource.getrlimit(resource.RLIMIT_AS)[0],
    "infinity": resource.RLIM_INFINITY,
    "named": worker_guard.memory_limit_mb,
    "reserve_64g_prot_none": reserve(64 << 30, 0),
    "reserve_2g_writable": reserve(2 << 30, 3),
}))
"""


@pytest.mark.skipif(limit_kind(sys.platform, os.uname().release, False) != "RLIMIT_DATA", reason="Linux >= 4.7")
def test_the_worker_limit_spares_address_space_reservations():
    env = dict(os.environ, **{worker_guard.MEMORY_LIMIT_MB: "1024"})
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["data"] == 1024 << 20 and got["named"] == 1024
    assert got["as"] == got["infinity"]  # the address space is left alone
    assert got["reserve_64g_prot_none"], "a CUDA-like PROT_NONE reservation was refused"
    assert not got["reserve_2g_writable"], "a writable mapping over the limit was allowed"


@pytest.mark.skipif(limit_kind(sys.platform, os.uname().release, False) != "RLIMIT_DATA", reason="Linux >= 4.7")
def test_the_suite_launcher_limits_data_and_a_worker_cannot_raise_it():
    probe = (
        "import json, resource; from torchdoctor.checks import worker_guard; worker_guard.install(); "
        "print(json.dumps([resource.getrlimit(resource.RLIMIT_DATA), resource.getrlimit(resource.RLIMIT_AS)[0], "
        "worker_guard.memory_limit_mb]))"
    )
    env = dict(os.environ, **{worker_guard.MEMORY_LIMIT_MB: str(64 * 1024 * 1024)})  # 64 TiB asked
    out = subprocess.run(limited_command(sys.executable, "-c", probe), env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    (soft, hard), address_space, named = json.loads(out.stdout)
    assert soft == hard == FAULT_MEMORY_LIMIT
    assert address_space == resource_infinity()
    assert named == FAULT_MEMORY_LIMIT >> 20  # the worker says the limit that holds


def resource_infinity() -> int:
    import resource

    return resource.RLIM_INFINITY
