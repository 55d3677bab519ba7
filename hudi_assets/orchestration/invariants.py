"""pandera schemas of the invariants the asset checks enforce.

Hudi only warns when `hoodie.cleaner.commits.retained >= hoodie.keep.min.commits` (and then
silently raises the archiver's minimum); we stop the run instead: archiving instants the cleaner
still needs is how tables end up with files no instant accounts for. Keys, alternatives, defaults,
bounds and the rules themselves come from `hudi_assets.config_options`.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

from hudi_assets import config_options as opt
from hudi_assets.config import ConfigOption, EnumOption, IntOption, WriteConfig

INSTANT_TIME = r"^[0-9]{14}([0-9]{3})?([0-9]{3})?$"  # ASCII digits only, as Java's \d
STATES = ("REQUESTED", "INFLIGHT", "COMPLETED")
RETENTION_OPTIONS: tuple[ConfigOption, ...] = (
    opt.CLEANER_POLICY, opt.CLEANER_COMMITS_RETAINED, opt.CLEANER_HOURS_RETAINED,
    opt.CLEANER_FILE_VERSIONS_RETAINED, opt.KEEP_MIN_COMMITS, opt.KEEP_MAX_COMMITS)


def config_frame(config: WriteConfig) -> pd.DataFrame:
    """One row of the retention settings as configured, by key: raw text, so that a bad value shows
    as it is (parsing would stop at the first one), with the registry's defaults and inference."""
    return pd.DataFrame([{option.key: config.text(option) for option in RETENTION_OPTIONS}])


def _int(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def _column_check(option: ConfigOption) -> pa.Check:
    """The option's own bounds (enum names or integer minimum) on its raw text column."""
    error = f"must be {option.kind()}"
    if isinstance(option, EnumOption):
        return pa.Check(lambda s: s.str.strip().str.upper().isin(option.choices), error=error)
    if isinstance(option, IntOption) and option.minimum is not None:
        return pa.Check(lambda s: _int(s) >= option.minimum, element_wise=False, error=error)
    raise TypeError(f"{option.key}: no retention check for {type(option).__name__}")


def _retained_below_min(df: pd.DataFrame) -> pd.Series:
    return opt.retained_below_keep_min(_int(df[opt.CLEANER_COMMITS_RETAINED.key]),
                                       _int(df[opt.KEEP_MIN_COMMITS.key]))


def _min_below_max(df: pd.DataFrame) -> pd.Series:
    return opt.keep_min_below_keep_max(_int(df[opt.KEEP_MIN_COMMITS.key]), _int(df[opt.KEEP_MAX_COMMITS.key]))


CONFIG_SCHEMA = pa.DataFrameSchema(
    {option.key: pa.Column(str, _column_check(option)) for option in RETENTION_OPTIONS},
    checks=[
        pa.Check(_retained_below_min, name="retained_below_keep_min", error=opt.RETAINED_BELOW_KEEP_MIN),
        pa.Check(_min_below_max, name="keep_min_below_keep_max", error=opt.KEEP_MIN_BELOW_KEEP_MAX),
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
