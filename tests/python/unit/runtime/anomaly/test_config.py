"""TORCHDOCTOR_ANOMALY: defaults, every key, and bad values that fall back instead of raising."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from torchdoctor.runtime.anomaly.config import (
    BREAK,
    CHECKS,
    DEFAULT_LOSS_ACTIONS,
    ENV_VAR,
    LOG,
    OFF,
    AnomalyConfig,
    from_env,
    from_mapping,
    parse,
)


def test_absent_or_empty_variable_means_no_watch():
    assert from_env({}) is None
    assert from_env({ENV_VAR: "  "}) is None


def test_defaults():
    config = parse("{}")
    assert (config.mode, config.threshold, config.skip_steps, config.first_only) == (BREAK, 1e4, 0, True)
    assert config.checks == CHECKS and config.dead_steps == 3 and config.spike_factor == 10.0
    assert config.loss_actions == {"nan": BREAK, "spike": BREAK, "notDecreasing": LOG, "oscillating": LOG}
    assert config.problems == []


def test_the_extensions_example_reads_back():
    text = json.dumps(
        {
            "mode": "break",
            "threshold": 1e4,
            "skipSteps": 0,
            "firstOnly": True,
            "checks": ["forward", "backward", "loss"],
            "loss": {"nan": "break", "notDecreasing": "log", "oscillating": "log", "spike": "break", "spikeFactor": 10},
        }
    )
    config = from_env({ENV_VAR: text})
    assert config.problems == []
    assert parse(json.dumps(config.to_json())).to_json() == config.to_json()


def test_every_key():
    config = from_mapping(
        {
            "mode": "log",
            "threshold": 50,
            "skipSteps": 3,
            "firstOnly": False,
            "checks": ["loss"],
            "deadSteps": 0,
            "loss": {"nan": "log", "spike": "off", "spikeFactor": 4, "notDecreasing": "break", "oscillating": "off"},
        }
    )
    assert (config.mode, config.threshold, config.skip_steps, config.first_only) == (LOG, 50.0, 3, False)
    assert config.checks == ("loss",) and config.dead_steps == 0 and config.spike_factor == 4.0
    assert config.watches("loss") and not config.watches("forward")


def test_mode_caps_rule_actions():
    config = from_mapping({"mode": "log"})
    assert config.action() == LOG and config.action("nan") == LOG and config.action("notDecreasing") == LOG
    config = from_mapping({"mode": "break", "loss": {"spike": "off"}})
    assert config.action() == BREAK and config.action("nan") == BREAK
    assert config.action("notDecreasing") == LOG and config.action("spike") == OFF
    assert from_mapping({"mode": "off"}).action("nan") == OFF


def test_bad_values_fall_back_with_a_reason():
    config = from_mapping(
        {
            "mode": "loud",
            "threshold": -1,
            "skipSteps": 1.5,
            "firstOnly": "yes",
            "checks": ["forward", "gpu"],
            "deadSteps": True,
            "loss": {"nan": 3, "spikeFactor": 0.5},
            "colour": "red",
        }
    )
    defaults = AnomalyConfig()
    assert (config.mode, config.threshold, config.skip_steps, config.first_only) == (
        defaults.mode,
        defaults.threshold,
        defaults.skip_steps,
        defaults.first_only,
    )
    assert config.checks == ("forward",) and config.dead_steps == 3
    assert config.loss_actions["nan"] == DEFAULT_LOSS_ACTIONS["nan"] and config.spike_factor == 10.0
    assert len(config.problems) == 9  # one per bad key
    assert any("colour" in p for p in config.problems) and any("gpu" in p for p in config.problems)


def test_not_json_or_not_an_object():
    assert parse("{mode: break").problems and parse("{mode: break").mode == BREAK
    assert parse("[1, 2]").problems and parse("[1, 2]").to_json() == AnomalyConfig().to_json()
    assert from_mapping({"loss": "all"}).problems


@given(
    st.dictionaries(
        st.sampled_from(["mode", "threshold", "skipSteps", "firstOnly", "checks", "deadSteps", "loss", "x"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            st.text(max_size=5),
            st.lists(st.text(max_size=8), max_size=3),
            st.dictionaries(st.text(max_size=12), st.one_of(st.text(max_size=6), st.floats()), max_size=3),
        ),
    )
)
def test_any_json_object_gives_a_usable_config(raw):
    config = from_mapping(raw)
    assert config.mode in (BREAK, LOG, OFF) and config.threshold > 0 and config.skip_steps >= 0
    assert set(config.checks) <= set(CHECKS) and config.spike_factor > 1
    json.dumps(config.to_json())
