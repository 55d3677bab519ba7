"""Check results, and the retention guard every deleting step runs before it touches the table.

A blocking check stops the steps after its asset, never the asset itself: materializing
`archive_batch` alone would run past a failed check on `timeline_snapshot`. So each step that deletes or
archives evaluates the retention rule first, reports it as its own blocking check, and stops (nothing
deleted) when it fails.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets.config import WriteConfig
from hudi_assets.orchestration.display import table_value
from hudi_assets.orchestration.invariants import CONFIG_SCHEMA, config_frame, describe, violations
from hudi_assets.orchestration.resources import HudiTableRegistry

RETENTION_CHECK = "retention_settings_are_safe"
RETENTION_DESCRIPTION = ("Retention settings are consistent before anything is planned or deleted: "
                         "commits.retained < keep.min < keep.max commits, values > 0, policy known.")


def logged(context: dg.OpExecutionContext, result: dg.AssetCheckResult) -> dg.AssetCheckResult:
    """The result, with a log line when it fails (error or warning by severity)."""
    if not result.passed:
        log = context.log.warning if result.severity == dg.AssetCheckSeverity.WARN else context.log.error
        log(f"check {result.check_name} failed: {result.description}")
    return result


def settings_in_force(config: WriteConfig) -> dict[str, str]:
    """The retention settings as configured (raw text), for metadata and the sensor's fingerprint."""
    return {str(k): str(v) for k, v in config_frame(config).iloc[0].items()}


def check_result(context: dg.OpExecutionContext, name: str, failures: pd.DataFrame, frame: pd.DataFrame,
                 what: str) -> dg.AssetCheckResult:
    """The result of check `name` from pandera's failure cases, with the offending rows shown."""
    if failures.empty:
        return dg.AssetCheckResult(check_name=name, passed=True, metadata={"rows_checked": len(frame)})
    sentences = describe(failures, frame)
    index = failures["index"].dropna().astype(int).unique()
    offending = frame.loc[index] if len(index) else failures.astype(str)
    return logged(context, dg.AssetCheckResult(
        check_name=name, passed=False,
        description=f"{what}: " + "; ".join(sentences),
        metadata={"violations": dg.MetadataValue.md("\n".join(f"- {s}" for s in sentences)),
                  "offending_rows": table_value(offending.head(50))},
    ))


def retention_check(context: dg.OpExecutionContext, hudi: HudiTableRegistry, key: str) -> dg.AssetCheckResult:
    """Hudi only warns when commits.retained >= keep.min (and raises the archiver's minimum); we stop:
    archiving instants the cleaner still needs leaves files no instant accounts for."""
    frame = config_frame(hudi.write_config(key, hudi.open(key)))
    return check_result(context, RETENTION_CHECK, violations(CONFIG_SCHEMA, frame), frame,
                        "unsafe retention settings")


def retention_settings_are_safe(context: dg.AssetCheckExecutionContext, key: str) -> dg.AssetCheckResult:
    """The standalone check on timeline_snapshot (the UI can execute it alone)."""
    return retention_check(context.op_execution_context, context.resources.hudi, key)


def retention_guard(context: dg.OpExecutionContext, hudi: HudiTableRegistry, key: str):
    """Yields the retention check of a deleting step; raises (the step deletes nothing) when it fails."""
    result = retention_check(context, hudi, key)
    yield result
    if not result.passed:
        raise dg.Failure(description=f"{key}: {result.description}; nothing was planned, deleted or archived",
                         allow_retries=False)


def retention_spec(asset: dg.AssetKey, partitions_def: dg.PartitionsDefinition | None) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(RETENTION_CHECK, asset=asset, blocking=True, description=RETENTION_DESCRIPTION,
                             partitions_def=partitions_def)
