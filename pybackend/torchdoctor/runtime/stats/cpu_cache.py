"""How big a block of the CPU float pass should be, from this CPU's caches.

The float pass reads each block four or five times: once from memory, then from cache. Two costs
pull the block size apart: each block costs ~10 torch calls and some Python whatever its size
(two reader threads also take turns at the GIL for it), and a block that leaves the nearest cache
between reads is read at the next level's speed. Measured (1e8 float32, ReLU-like, summarize /
one ``aminmax``):

- 2-core Xeon with a 2 MiB L2 a core, under load 5: 1 MiB blocks 2.3x, 4 MiB 2.9x: a block
  that fits half the L2 wins;
- 2-core AMD EPYC with 512 KiB of L2 a core and a 32 MiB L3, idle (2026-12-05, two readers):
  128 KiB 27x, 256 KiB 12x, 512 KiB 6.8x, 1 MiB 4.6x, 2 MiB 3.2-3.5x, 4 MiB 3.0-3.6x, 8 MiB 4.1x,
  16 MiB 4.5x: no useful block fits that L2, so fewer and bigger blocks that stay in the L3 win.

- 2-core Xeon with AMX, a 2 MiB L2 a core and a 480 MiB L3 (2026-12-05, torch 2.13, two readers):
  idle, 1 MiB 3.2-3.4x, 2 MiB 2.7-2.8x, 4 MiB 2.6x, 8 MiB 2.6x (bf16 and f16 alike: 3.4x -> 2.6x);
  beside three processes streaming memory, 1 MiB 3.0-3.4x and 4 MiB 3.6x: what the others read
  pushes a block out of the shared L3 between its reads, not out of the core's own L2.

So, while other processes load the CPUs: half the L2 where that is at least 1 MiB; else, where the
L3 can hold two blocks for every core sharing it, 4 MiB (or less, down to 1 MiB, for a smaller L3
share); else 1 MiB. While they leave every core idle (``quiet``, :func:`guard.machine_quiet`): the
bigger of the two, since an idle L3 keeps the block between its reads and fewer blocks cost fewer
calls. Sizes come from Linux's sysfs; elsewhere (or unreadable) 1 MiB, the block used before this
module.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Dict, Optional, Tuple

MIB = 1 << 20
DEFAULT = MIB  # no cache sizes known
LARGEST = 4 * MIB
_SYSFS = Path("/sys/devices/system/cpu/cpu0/cache")


def parse_size(text: str) -> Optional[int]:
    """Bytes of a sysfs cache size (``"512K"``, ``"32768K"``, ``"2M"``, ``"1048576"``), or None."""
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": MIB, "G": 1 << 30}.get(text[-1:], 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else None


def _count_cpus(text: str) -> int:
    """CPUs in a sysfs list such as ``"0-1"``, ``"0,4"`` or ``"0-3,8-11"``."""
    count = 0
    for part in text.strip().split(","):
        low, _, high = part.partition("-")
        if low.isdigit():
            count += int(high) - int(low) + 1 if high.isdigit() else 1
    return count


def read_caches(root: Path = _SYSFS) -> Dict[int, Tuple[int, int]]:
    """``{level: (bytes, cpus sharing it)}`` of cpu0's data and unified caches; {} if unreadable."""
    found: Dict[int, Tuple[int, int]] = {}
    try:
        for entry in sorted(root.glob("index*")):
            if (entry / "type").read_text().strip() not in ("Data", "Unified"):
                continue
            size = parse_size((entry / "size").read_text())
            shared = entry / "shared_cpu_list"
            cpus = _count_cpus(shared.read_text()) if shared.exists() else 1
            if size:
                found[int((entry / "level").read_text())] = (size, max(1, cpus))
    except (OSError, ValueError):
        return {}
    return found


def choose(caches: Dict[int, Tuple[int, int]], quiet: bool = False) -> int:
    """Block bytes for the caches of :func:`read_caches` (the rule of the module's docstring);
    ``quiet``: no other process loads the CPUs."""
    l2, l3 = _l2_block(caches), _l3_block(caches)
    if quiet and (l2 or l3):
        return max(l2 or 0, l3 or 0)
    return l2 or l3 or DEFAULT


def _l2_block(caches: Dict[int, Tuple[int, int]]) -> Optional[int]:
    """Half a core's L2, where that is at least 1 MiB."""
    l2 = caches.get(2)
    if l2 is not None and l2[0] // l2[1] // 2 >= MIB:
        return min(LARGEST, l2[0] // l2[1] // 2)
    return None


def _l3_block(caches: Dict[int, Tuple[int, int]]) -> Optional[int]:
    """A power of two (blocks of whole rows) such that the L3 holds two for every core sharing it."""
    l3 = caches.get(3)
    if l3 is not None:
        share = l3[0] // l3[1] // 2
        if share >= MIB:
            return min(LARGEST, 1 << (share.bit_length() - 1))
    return None


@functools.lru_cache(maxsize=1)
def _caches() -> Dict[int, Tuple[int, int]]:
    return read_caches()


def block_bytes(quiet: bool = False) -> int:
    """This machine's block for the CPU float pass (its caches read once)."""
    return choose(_caches(), quiet)
