"""torchDoctor/diagnoseSnapshot over the real backend: view models from real snapshots.

The snapshots are made here by the real runtime (in this test process, which has torch) on the
sample workspace's models, written with ``snapshot.dump`` and sent as the extension sends them:
the parsed JSON object under ``snapshot``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
import torch
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from torchdoctor.server import protocol

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "sample_workspace"))


def _plain(obj):
    if hasattr(obj, "_asdict"):
        return {k: _plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> dict:
    """Real snapshots: a dead-ReLU MLP after backward, a shape error, an empty collection."""
    from torchdoctor.runtime.collect import install as collect_install
    from torchdoctor.runtime.collect import snapshot

    out = {}
    folder = tmp_path_factory.mktemp("snapshots")
    collect_install.install(1.0)
    try:
        out["empty"] = _dump(snapshot, folder / "empty.json")
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
        with torch.no_grad():
            model[0].bias.fill_(-100.0)  # every unit of the ReLU is dead
        loss = torch.nn.functional.cross_entropy(model(torch.randn(32, 10)), torch.randint(0, 2, (32,)))
        loss.backward()
        out["dead"] = _dump(snapshot, folder / "dead.json")
        from models.shape_mismatch import LeNetish

        lenet = LeNetish()
        with pytest.raises(RuntimeError):
            lenet(torch.randn(4, 3, 32, 32))
        out["shape"] = _dump(snapshot, folder / "shape.json", lenet)
        out["keep"] = (model, lenet)
    finally:
        collect_install.uninstall()
    return out


def _dump(snapshot, path: Path, model=None) -> dict:
    status = snapshot.dump(str(path), model)
    data = json.loads(path.read_text())
    data["_status"] = status
    return data


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchdoctor.server", "--stdio"]))
async def client(lsp_client: LanguageClient):
    lsp_client.set_configuration({"torchDoctor": {"diagnosis": {"deadFraction": 0.5}}})
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _diagnose(client: LanguageClient, snap: dict) -> dict:
    snap = {k: v for k, v in snap.items() if not k.startswith("_")}
    return _plain(await client.protocol.send_request_async(protocol.DIAGNOSE_SNAPSHOT, {"snapshot": snap}))


async def test_dead_relu_snapshot_flags_the_dead_layer(client: LanguageClient, snapshots):
    result = await _diagnose(client, snapshots["dead"])
    assert result["status"] == "ok"
    flow = result["gradientFlow"]
    assert [r["name"] for r in flow["rows"]] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    dead = [v for v in flow["verdicts"] if v["rule"] == "dead-units"]
    assert dead and dead[0]["module"] == "1" and "`1` (ReLU)" in dead[0]["sentence"]
    assert "LeakyReLU" in dead[0]["suggestion"] and "kaiming_normal_(0.weight" in dead[0]["suggestion"]
    first = flow["rows"][0]
    assert first["meanAbs"] == 0 and {f["rule"] for f in first["flags"]} >= {"grad-vanishing", "dead-units"}
    assert first["location"] is None or first["location"]["line"] >= 1
    assert set(flow["thresholds"]) == set(protocol.DIAGNOSIS_DEFAULTS)
    trace = result["shapeTrace"]
    assert [r["path"] for r in trace["rows"]] == ["", "0", "1", "2"]
    assert trace["rows"][1]["outputs"][0]["shape"] == [32, 16] and trace["failedModule"] is None


async def test_shape_error_snapshot_marks_the_failing_module(client: LanguageClient, snapshots):
    result = await _diagnose(client, snapshots["shape"])
    trace = result["shapeTrace"]
    assert trace["failedModule"] == "fc1"
    assert [r["path"] for r in trace["rows"] if r["failed"]] == ["fc1"]
    assert re.match(
        r"RuntimeError: (addmm: )?mat1 and mat2 shapes cannot be multiplied \(4x576 and 400x32\)", trace["error"]
    )  # torch 2.15 names addmm
    assert "nn.Linear(576" in trace["summary"]
    fc1 = next(r for r in trace["rows"] if r["path"] == "fc1")
    assert fc1["outputs"] == [] and fc1["inputs"][0]["shape"] == [4, 576]
    assert fc1["location"]["file"].endswith("shape_mismatch.py")
    assert result["gradientFlow"]["rows"] == [] and "No gradients yet" in result["gradientFlow"]["summary"]


async def test_empty_and_invalid_snapshots_answer_why(client: LanguageClient, snapshots):
    empty = await _diagnose(client, snapshots["empty"])
    assert empty["status"] == "empty" and empty["gradientFlow"] is None and "no model seen yet" in empty["message"]
    invalid = await _diagnose(client, {"schema": "torchdoctor.snapshot", "version": 99})
    assert invalid["status"] == "invalid" and "version 99" in invalid["message"]
    junk = await _diagnose(client, {"hello": 1})
    assert junk["status"] == "invalid"


async def test_thresholds_come_from_settings(client: LanguageClient, snapshots):
    client.set_configuration({"torchDoctor": {"diagnosis": {"vanishingGradient": 1e-30, "deadFraction": 1.0}}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    deadline = time.monotonic() + 60  # a ceiling: the server asks for the settings, then uses them
    while True:
        result = await _diagnose(client, snapshots["dead"])
        if result["gradientFlow"]["thresholds"]["deadFraction"] == 1.0 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)  # the client answers the server's configuration request meanwhile
    flow = result["gradientFlow"]
    assert flow["thresholds"]["vanishingGradient"] == 1e-30
    assert not [v for v in flow["verdicts"] if v["rule"] == "dead-units"]  # 100% is not above 1.0
    assert [v for v in flow["verdicts"] if v["rule"] == "grad-vanishing"]  # exactly 0 is below 1e-30


async def test_a_snapshot_of_hundreds_of_layers_is_quick(client: LanguageClient, tmp_path):
    from torchdoctor.runtime.collect import install as collect_install
    from torchdoctor.runtime.collect import snapshot

    def snapshot_of(blocks: int) -> dict:
        collect_install.install(1.0)
        try:
            model = torch.nn.Sequential(
                *[torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()) for _ in range(blocks)]
            )
            model(torch.randn(4, 8)).sum().backward()
            return _dump(snapshot, tmp_path / f"net{blocks}.json")
        finally:
            collect_install.uninstall()

    small, snap = snapshot_of(15), snapshot_of(150)
    assert len(snap["calls"]) == 451

    async def best_time(s: dict) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            await _diagnose(client, s)
            best = min(best, time.perf_counter() - start)
        return best

    result = await _diagnose(client, snap)
    assert len(result["gradientFlow"]["rows"]) == 300 and len(result["shapeTrace"]["rows"]) == 451
    # A relation, not a machine's seconds: 10x the layers must cost about 10x (linear), far from
    # the 100x of a lookup that walks every call per layer. Two timings compared: a load spike
    # over all of one size's runs can break it, so it must hold in one of three fresh trials.
    seen = []
    for _trial in range(3):
        t_small, t_big = await best_time(small), await best_time(snap)
        seen.append((t_small, t_big))
        if t_big < 40 * t_small:
            break
    assert t_big < 40 * t_small, seen


async def test_the_snapshot_as_text_gives_the_same_answer(client: LanguageClient, snapshots):
    snap = {k: v for k, v in snapshots["dead"].items() if not k.startswith("_")}
    as_object = await _diagnose(client, snap)
    as_text = _plain(
        await client.protocol.send_request_async(protocol.DIAGNOSE_SNAPSHOT, {"snapshot": json.dumps(snap)})
    )
    assert as_text == as_object
    broken = _plain(await client.protocol.send_request_async(protocol.DIAGNOSE_SNAPSHOT, {"snapshot": "{not json"}))
    assert broken["status"] == "invalid"
