"""Check results, and the settings guard every deleting step runs before it touches the table.

Guards live in the steps, not in Dagster's `blocking=True`: a failed blocking check fails its step and
so the run, and Dagster then shows every check planned in that run and not evaluated as "Execution
failed". Instead each step that deletes or archives evaluates the settings check first, reports it as
its own check (ERROR), and when it fails ends without output (a refusal): nothing deleted, no
materialization recorded, later steps skipped, and their checks read Skipped (see `factory`).

The settings check shows the core's findings (`config_options.check`), each with its rule, severity,
message and keys, worded as the CLI and the API word them. Policy of this face: it refuses on the
`retained_below_keep_min` warning too (Hudi only warns and raises the archiver's minimum; unattended
runs stop instead: archiving instants the cleaner still needs leaves files no instant accounts for).
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from hudi_assets import config_options as opt
from hudi_assets.config import ConfigOption, WriteConfig
from hudi_assets.exceptions import UnsupportedTableError
from hudi_assets.findings import Finding, Severity
from hudi_assets.orchestration.display import table_value
from hudi_assets.orchestration.invariants import describe
from hudi_assets.table import HoodieTable

RETENTION_CHECK = "retention_settings_are_safe"
RETENTION_DESCRIPTION = ("The core's findings on the settings, before anything is planned or deleted: "
                         "values within bounds, keep.min < keep.max, LAZY failed writes under optimistic "
                         "concurrency; commits.retained < keep.min blocks here too (a policy of this face).")
# Warnings this face blocks on (see the module doc); every ERROR blocks in every face.
BLOCKING_WARNINGS = frozenset({opt.Rule.RETAINED_BELOW_KEEP_MIN})
# The retention settings shown as definition and snapshot metadata (and in the sensor's fingerprint).
SHOWN_SETTINGS: tuple[ConfigOption, ...] = (
    opt.CLEANER_POLICY, opt.CLEANER_COMMITS_RETAINED, opt.CLEANER_HOURS_RETAINED,
    opt.CLEANER_FILE_VERSIONS_RETAINED, opt.KEEP_MIN_COMMITS, opt.KEEP_MAX_COMMITS)


def logged(context: dg.OpExecutionContext, result: dg.AssetCheckResult) -> dg.AssetCheckResult:
    """The result, with a log line when it fails (error or warning by severity)."""
    if not result.passed:
        log = context.log.warning if result.severity == dg.AssetCheckSeverity.WARN else context.log.error
        log(f"check {result.check_name} failed: {result.description}")
    return result


def settings_in_force(config: WriteConfig) -> dict[str, str]:
    """The retention settings as configured (raw text), by key, for metadata and the sensor's fingerprint."""
    return {option.key: config.text(option) for option in SHOWN_SETTINGS}


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


def blocks(finding: Finding) -> bool:
    return finding.severity is Severity.ERROR or finding.rule in BLOCKING_WARNINGS


def findings_result(context: dg.OpExecutionContext, findings: list[Finding]) -> dg.AssetCheckResult:
    """The settings check: passed without findings; else failed, ERROR when one blocks (see the module
    doc), WARN otherwise, each finding a row and its message, as the core words it, in the description."""
    if not findings:
        return dg.AssetCheckResult(check_name=RETENTION_CHECK, passed=True, metadata={"findings": 0})
    rows = pd.DataFrame([(f.rule, f.severity.value, ", ".join(f.keys), f.message) for f in findings],
                        columns=["rule", "severity", "keys", "message"])
    severity = dg.AssetCheckSeverity.ERROR if any(map(blocks, findings)) else dg.AssetCheckSeverity.WARN
    return logged(context, dg.AssetCheckResult(
        check_name=RETENTION_CHECK, passed=False, severity=severity,
        description="; ".join(f.message for f in findings),
        metadata={"findings": len(findings), "findings_table": table_value(rows)}))


def retention_check(context: dg.OpExecutionContext, table: HoodieTable) -> dg.AssetCheckResult:
    return findings_result(context, opt.check(table.write_config))


def retention_settings_are_safe(context: dg.AssetCheckExecutionContext, key: str) -> dg.AssetCheckResult:
    """The standalone check on timeline_snapshot (the UI can execute it alone)."""
    return retention_check(context.op_execution_context, context.resources.hudi.open(key))


def refused(context: dg.OpExecutionContext, message: str) -> bool:
    """Logs why a step stops before touching the table; False, for `return (yield from guard(...))`."""
    context.log.error(f"refused: {message}")
    return False


def version_guard(context: dg.OpExecutionContext, table: HoodieTable, key: str, service: str) -> bool:
    """Whether the table's version has `service` (`TableConfig.check_service`): when not, the step
    refuses with the core's reason and the steps after it are skipped."""
    try:
        table.config.check_service(service, table.base_path)
    except UnsupportedTableError as exc:
        return refused(context, f"{key}: {exc}; nothing was planned, deleted or archived")
    return True


def retention_guard(context: dg.OpExecutionContext, table: HoodieTable, key: str):
    """Yields the settings check of a deleting step; returns whether the step may go on."""
    result = retention_check(context, table)
    yield result
    if result.severity == dg.AssetCheckSeverity.ERROR and not result.passed:
        return refused(context, f"{key} ({table.base_path}): {result.description}; nothing was planned, "
                                "deleted or archived")
    return True
