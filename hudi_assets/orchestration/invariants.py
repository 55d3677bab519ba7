"""pandera schemas of the invariants the asset checks enforce.

Hudi only warns when `hoodie.cleaner.commits.retained >= hoodie.keep.min.commits` (and then
silently raises the archiver's minimum); we stop the run instead: archiving instants the cleaner
still needs is how tables end up with files no instant accounts for.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.clean.config import (
    ALTERNATIVES,
    COMMITS_RETAINED,
    FILE_VERSIONS_RETAINED,
    HOURS_RETAINED,
    KEEP_MAX_COMMITS,
    KEEP_MIN_COMMITS,
    POLICY,
    CleanConfig,
    infer_policy,
)
from hudi_assets.config import WriteConfig

CLEANER_POLICIES = ("KEEP_LATEST_COMMITS", "KEEP_LATEST_BY_HOURS", "KEEP_LATEST_FILE_VERSIONS")
INSTANT_TIME = r"^[0-9]{14}([0-9]{3})?([0-9]{3})?$"  # ASCII digits only, as Java's \d
STATES = ("REQUESTED", "INFLIGHT", "COMPLETED")


def config_frame(config: WriteConfig) -> pd.DataFrame:
    """One row of the retention settings as configured: raw text, so that a bad value shows as it is
    (parsing would stop at the first one), with the cleaner's own defaults, aliases and inference."""
    defaults = CleanConfig()
    settings = {
        POLICY: infer_policy(config),
        COMMITS_RETAINED: str(defaults.commits_retained),
        HOURS_RETAINED: str(defaults.hours_retained),
        FILE_VERSIONS_RETAINED: str(defaults.file_versions_retained),
        KEEP_MIN_COMMITS: str(ArchiveConfig().min_commits),
        KEEP_MAX_COMMITS: str(ArchiveConfig().max_commits),
    }
    row = {}
    for key, default in settings.items():
        found = config.find(key, ALTERNATIVES.get(key, ()))
        row[key] = default if found is None else found[1]
    return pd.DataFrame([row])


def _int(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def _retained_below_min(df: pd.DataFrame) -> pd.Series:
    return _int(df["hoodie.cleaner.commits.retained"]) < _int(df["hoodie.keep.min.commits"])


def _min_below_max(df: pd.DataFrame) -> pd.Series:
    return _int(df["hoodie.keep.min.commits"]) < _int(df["hoodie.keep.max.commits"])


_POSITIVE_INT = pa.Check(lambda s: _int(s) > 0, element_wise=False, error="must be an integer > 0")

_KNOWN_POLICY = pa.Check(lambda s: s.str.upper().isin(CLEANER_POLICIES),
                         error=f"must be one of {', '.join(CLEANER_POLICIES)}")

CONFIG_SCHEMA = pa.DataFrameSchema(
    {
        "hoodie.cleaner.policy": pa.Column(str, _KNOWN_POLICY),
        "hoodie.cleaner.commits.retained": pa.Column(str, _POSITIVE_INT),
        "hoodie.cleaner.hours.retained": pa.Column(str, _POSITIVE_INT),
        "hoodie.cleaner.fileversions.retained": pa.Column(str, _POSITIVE_INT),
        "hoodie.keep.min.commits": pa.Column(str, _POSITIVE_INT),
        "hoodie.keep.max.commits": pa.Column(str, _POSITIVE_INT),
    },
    checks=[
        pa.Check(_retained_below_min, name="retained_below_keep_min",
                 error="hoodie.cleaner.commits.retained must be < hoodie.keep.min.commits"),
        pa.Check(_min_below_max, name="keep_min_below_keep_max",
                 error="hoodie.keep.min.commits must be < hoodie.keep.max.commits"),
    ],
    name="retention settings",
)

TIMELINE_SCHEMA = pa.DataFrameSchema(
    {
        "instant": pa.Column(str, pa.Check.str_matches(INSTANT_TIME)),
        "action": pa.Column(str),
        "state": pa.Column(str, pa.Check.isin(STATES)),
        "timeline": pa.Column(str, pa.Check.isin(("active", "archived"))),
    },
    unique=["timeline", "instant", "action"],
    name="timeline",
)


def _all_true(error: str) -> pa.Column:
    return pa.Column(bool, pa.Check(lambda s: s.astype(bool), error=error), coerce=True)


def _all_false(error: str) -> pa.Column:
    return pa.Column(bool, pa.Check(lambda s: ~s.astype(bool), error=error), coerce=True)


PLAN_SCHEMA = pa.DataFrameSchema(
    {
        "inside_base_path": _all_true("must be inside the table's base path and outside .hoodie"),
        "in_latest_slice": _all_false("is part of the latest file slice of its file group"),
        "savepointed": _all_false("is listed by a savepoint"),
        "read_by_pending_plan": _all_false("is read by a pending compaction or clustering plan"),
        "before_ectr": _all_true("belongs to a slice at or after the earliest commit to retain"),
    },
    name="clean plan",
)

SURVIVORS_SCHEMA = pa.DataFrameSchema({"exists": _all_true("is missing after the clean")},
                                      name="retained files")

ARCHIVE_SCHEMA = pa.DataFrameSchema({"archived": _all_true("was removed from the active timeline but is "
                                                           "not readable in the archive")},
                                    name="archived instants")


def violations(schema: pa.DataFrameSchema, frame: pd.DataFrame) -> pd.DataFrame:
    """The failure cases of `frame` against `schema` (empty when it holds)."""
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as errors:
        return errors.failure_cases
    return pd.DataFrame()


def describe(failures: pd.DataFrame, frame: pd.DataFrame) -> list[str]:
    """One sentence per failed check, naming the offending keys and their values."""
    sentences: list[str] = []
    labels = next((c for c in ("path", "instant") if c in frame.columns), None)
    for (context, check, column), cases in failures.groupby(["schema_context", "check", "column"],
                                                               sort=False, dropna=False):
        if context == "Column" and labels is not None:  # rows of files or instants: name a few
            rows = frame.loc[cases["index"].dropna().astype(int).unique(), labels].tolist()
            sample = ", ".join(map(str, rows[:3])) + (", ..." if len(rows) > 3 else "")
            sentences.append(f"{len(rows)} {labels}(s) where {column} fails: {check} ({sample})")
            continue
        index = cases["index"].iloc[0]
        if context == "Column":
            sentence = f"{column}={cases['failure_case'].iloc[0]!r} {check}"
        else:
            named = [c for c in frame.columns if c in str(check)]
            values = ", ".join(f"{c}={frame.loc[index, c]}" for c in named)
            sentence = f"{check} ({values})" if values else str(check)
        if sentence not in sentences:
            sentences.append(sentence)
    return sentences
