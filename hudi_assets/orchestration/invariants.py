"""pandera schemas of the frames the asset checks validate: the timeline's rows, the files a clean must
leave, the instants an archive batch removed. Rules on settings are the core's findings
(`config_options.check`), not restated here.
"""

from __future__ import annotations

import pandas as pd
import pandera.pandas as pa

INSTANT_TIME = r"^[0-9]{14}([0-9]{3})?([0-9]{3})?$"  # ASCII digits only, as Java's \d
STATES = ("REQUESTED", "INFLIGHT", "COMPLETED")

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
    """One sentence per failed check, naming the offending keys and their values; the frame's rows are
    files (`path`) or instants (`instant`), as every schema here validates."""
    sentences: list[str] = []
    labels = "path" if "path" in frame.columns else "instant"
    for (context, check, column), cases in failures.groupby(["schema_context", "check", "column"],
                                                               sort=False, dropna=False):
        if context == "Column":  # name a few of the offending files or instants
            rows = frame.loc[cases["index"].dropna().astype(int).unique(), labels].tolist()
            sample = ", ".join(map(str, rows[:3])) + (", ..." if len(rows) > 3 else "")
            sentences.append(f"{len(rows)} {labels}(s) where {column} fails: {check} ({sample})")
            continue
        index = cases["index"].iloc[0]
        named = [c for c in frame.columns if c in str(check)]
        values = ", ".join(f"{c}={frame.loc[index, c]}" for c in named)
        sentence = f"{check} ({values})" if values else str(check)
        if sentence not in sentences:
            sentences.append(sentence)
    return sentences
