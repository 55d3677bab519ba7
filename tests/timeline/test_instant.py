"""Instant file names of layout v1: every action and state, and the irregular ones."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_assets.exceptions import CorruptFileError
from hudi_assets.timeline.instant import (
    ACTIONS,
    SAVEPOINT,
    Instant,
    State,
    completed_instants,
    highest_states,
)

T = "20240101120000123"


@pytest.mark.parametrize(
    ("name", "action", "state"),
    [
        (f"{T}.commit", "commit", State.COMPLETED),
        (f"{T}.inflight", "commit", State.INFLIGHT),
        (f"{T}.commit.requested", "commit", State.REQUESTED),
        (f"{T}.deltacommit.inflight", "deltacommit", State.INFLIGHT),
        (f"{T}.compaction.requested", "compaction", State.REQUESTED),
        (f"{T}.compaction.inflight", "compaction", State.INFLIGHT),
        (f"{T}.logcompaction.requested", "logcompaction", State.REQUESTED),
        (f"{T}.savepoint.inflight", "savepoint", State.INFLIGHT),
        (f"{T}.clean", "clean", State.COMPLETED),
        (f"{T}.replacecommit.requested", "replacecommit", State.REQUESTED),
        (f"{T}.rollback", "rollback", State.COMPLETED),
        (f"{T}.indexing.inflight", "indexing", State.INFLIGHT),
        ("00000000000000.deltacommit", "deltacommit", State.COMPLETED),
    ],
)
def test_parse_and_format(name, action, state):
    instant = Instant.parse_file_name(name)
    assert instant == Instant(name.split(".")[0], action, state)
    assert instant.file_name == name


def test_compaction_completes_as_commit():
    done = Instant(T, "compaction", State.REQUESTED).with_state(State.COMPLETED)
    assert done == Instant(T, "commit") and done.file_name == f"{T}.commit"
    assert Instant(T, "logcompaction").with_state(State.COMPLETED).file_name == f"{T}.deltacommit"
    # A compaction sorts with commits at the same time, before the completed state.
    assert Instant(T, "compaction", State.INFLIGHT) < Instant(T, "commit")


def test_comparable_key_is_the_instant_whatever_its_state():
    """Every state file of a compaction (requested, inflight, its `commit`) is one instant."""
    states = [Instant(T, "compaction", State.REQUESTED), Instant(T, "compaction", State.INFLIGHT),
              Instant(T, "commit")]
    assert {i.comparable_key for i in states} == {(T, "commit")}
    clustering = Instant(T, "clustering", State.INFLIGHT)
    assert clustering.comparable_key == Instant(T, "replacecommit").comparable_key
    assert Instant(T, "deltacommit").comparable_key != Instant(T, "commit").comparable_key


@pytest.mark.parametrize("name", ["hoodie.properties", ".aux", "archived", "2024.commit.crc.x", "x.commit"])
def test_non_instant_files_are_ignored(name):
    assert Instant.parse_file_name(name) is None


@pytest.mark.parametrize("name", [f"{T}.frobnicate", f"{T}.commit.bogus", f"{T}.compaction",
                                  f"{T}.savepoint.requested"])
def test_unknown_actions_and_states_are_errors_naming_the_file(name):
    with pytest.raises(CorruptFileError, match=name.replace(".", r"\.")):
        Instant.parse_file_name(name)


@given(st.from_regex(r"\A[0-9]{17}\Z"), st.sampled_from(ACTIONS), st.sampled_from(list(State)))
def test_round_trip_every_action_and_state(ts, action, state):
    if action == SAVEPOINT and state is State.REQUESTED:
        return
    instant = Instant(ts, action, state)
    parsed = Instant.parse_file_name(instant.file_name)
    assert parsed == instant.with_state(state) if state is State.COMPLETED else parsed == instant


FULL_WIDTH = T.translate(str.maketrans("0123456789", "０１２３４５６７８９"))  # Unicode digits, not ASCII


def test_only_ascii_digits_make_instant_times_as_in_java():
    """Java's `\\d` and its date parser take 0-9 only; Python's `\\d` and isdigit take any script's."""
    import pandas as pd
    import pandera.errors

    from hudi_assets.logformat.names import LogFileName
    from hudi_assets.orchestration.invariants import TIMELINE_SCHEMA
    from hudi_assets.timeline.instant_time import parse_instant_time

    assert Instant.parse_file_name(f"{FULL_WIDTH}.commit") is None
    assert parse_instant_time(FULL_WIDTH) is None and parse_instant_time(T) is not None
    assert LogFileName.parse(".f1-0_001.log.１_0-1-1") is None
    assert LogFileName.parse(".f1-0_001.log.1_０-1-1").write_token is None  # token part not matched
    frame = pd.DataFrame({"instant": [FULL_WIDTH], "action": ["commit"], "state": ["COMPLETED"],
                          "timeline": ["active"]})
    with pytest.raises(pandera.errors.SchemaError):
        TIMELINE_SCHEMA.validate(frame)
    TIMELINE_SCHEMA.validate(frame.assign(instant=[T]))


def test_completed_instants_are_the_instants_the_constructor_makes():
    """`completed_instants` sets `Instant`'s slots itself: a field added to `Instant` must reach it."""
    assert [f.name for f in dataclasses.fields(Instant)] == ["timestamp", "action", "state"]
    made = completed_instants([T, "00000000000000"], ["commit", "clean"])
    assert made == [Instant(T, "commit"), Instant("00000000000000", "clean")]
    assert [hash(i) for i in made] == [hash(Instant(T, "commit")), hash(Instant("00000000000000", "clean"))]
    assert all(type(i) is Instant and i.is_completed for i in made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].action = "clean"


def test_highest_states_keeps_each_instant_once_in_its_highest_state():
    files = [Instant("1", "compaction", State.REQUESTED), Instant("2", "clean", State.INFLIGHT),
             Instant("1", "commit"), Instant("1", "compaction", State.INFLIGHT),
             Instant("2", "clean", State.REQUESTED)]
    assert highest_states(files) == [Instant("1", "commit"), Instant("2", "clean", State.INFLIGHT)]
