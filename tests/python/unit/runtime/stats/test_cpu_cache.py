"""The float pass's block size from the CPU caches (sysfs sizes, the rule, a fake sysfs tree)."""

from __future__ import annotations

from torchdoctor.runtime.stats import cpu_cache
from torchdoctor.runtime.stats.cpu_cache import MIB, choose, parse_size, read_caches


def test_sizes_as_sysfs_writes_them():
    assert parse_size("512K\n") == 512 << 10
    assert parse_size("32768K") == 32 * MIB
    assert parse_size("2M") == 2 * MIB
    assert parse_size("1048576") == MIB
    assert parse_size("") is None and parse_size("lots") is None


def test_cpus_sharing_a_cache():
    assert cpu_cache._count_cpus("0") == 1
    assert cpu_cache._count_cpus("0-1") == 2
    assert cpu_cache._count_cpus("0,4") == 2
    assert cpu_cache._count_cpus("0-3,8-11\n") == 8


def test_a_big_private_l2_gives_half_of_it():
    # A Xeon with 2 MiB of L2 a core: 1 MiB blocks (measured 2.3x one aminmax against 2.9x at 4 MiB).
    assert choose({2: (2 * MIB, 1), 3: (105 * MIB, 2)}) == MIB


def test_a_quiet_machine_takes_the_bigger_of_the_l2_and_l3_blocks():
    # The AMX Xeon: 2 MiB of L2 a core, 480 MiB of L3 for two. Idle: 4 MiB 2.6x one aminmax against
    # 3.2-3.4x at 1 MiB; beside three memory-streaming processes 3.6x against 3.0-3.4x.
    caches = {2: (2 * MIB, 1), 3: (480 * MIB, 2)}
    assert choose(caches, quiet=True) == 4 * MIB and choose(caches) == MIB
    assert choose({2: (2 * MIB, 1), 3: (3 * MIB, 2)}, quiet=True) == MIB  # an L3 too small: the L2's
    assert choose({2: (8 * MIB, 1), 3: (480 * MIB, 2)}, quiet=True) == 4 * MIB  # never past LARGEST
    assert choose({2: (512 << 10, 1), 3: (32 * MIB, 2)}, quiet=True) == 4 * MIB  # the EPYC: as when busy
    assert choose({}, quiet=True) == MIB


def test_the_block_follows_whether_other_processes_load_the_cpus():
    # outside a pass (and inside one that found others at work) the busy rule's block
    assert cpu_cache.block_bytes(False) == choose(cpu_cache.read_caches())
    assert cpu_cache.block_bytes(True) == choose(cpu_cache.read_caches(), quiet=True) >= cpu_cache.block_bytes()


def test_a_small_l2_and_a_big_l3_give_4_mib():
    # The 2-core EPYC: 512 KiB L2 a core, 32 MiB L3 shared by both.
    assert choose({2: (512 << 10, 1), 3: (32 * MIB, 2)}) == 4 * MIB


def test_a_small_l3_share_gives_smaller_blocks_never_below_1_mib():
    assert choose({2: (512 << 10, 1), 3: (8 * MIB, 2)}) == 2 * MIB
    assert choose({2: (512 << 10, 1), 3: (12 * MIB, 2)}) == 2 * MIB  # a power of two
    assert choose({2: (256 << 10, 2), 3: (16 * MIB, 32)}) == MIB


def test_unknown_caches_keep_1_mib():
    assert choose({}) == MIB


def _cache(root, index, level, kind, size, shared):
    entry = root / f"index{index}"
    entry.mkdir()
    (entry / "level").write_text(f"{level}\n")
    (entry / "type").write_text(f"{kind}\n")
    (entry / "size").write_text(f"{size}\n")
    (entry / "shared_cpu_list").write_text(f"{shared}\n")


def test_reads_data_and_unified_caches_from_sysfs(tmp_path):
    _cache(tmp_path, 0, 1, "Data", "32K", "0")
    _cache(tmp_path, 1, 1, "Instruction", "32K", "0")
    _cache(tmp_path, 2, 2, "Unified", "512K", "0")
    _cache(tmp_path, 3, 3, "Unified", "32768K", "0-1")
    assert read_caches(tmp_path) == {1: (32 << 10, 1), 2: (512 << 10, 1), 3: (32 * MIB, 2)}


def test_an_unreadable_tree_gives_nothing(tmp_path):
    assert read_caches(tmp_path / "missing") == {}
    (tmp_path / "index0").mkdir()  # no files inside
    assert read_caches(tmp_path) == {}


def test_this_machine_gets_a_block_between_1_and_4_mib():
    assert MIB <= cpu_cache.block_bytes() <= 4 * MIB
