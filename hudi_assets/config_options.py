"""Every setting maintenance reads, declared once: key, 1.x alternative names, default (or inference),
type and bounds, and a one-line doc; and `check`, the findings on them every face renders.

Keys, names and defaults are Hudi 0.15's (`HoodieCleanConfig`, `HoodieArchivalConfig`,
`HoodieCompactionConfig`, `HoodieWriteConfig`); the 1.x `hoodie.clean.*` names are accepted as
alternatives. Bounds are stricter than Hudi's on purpose: Hudi takes `fileversions.retained=0` and
deletes the latest slice of every file group, `keep.max <= keep.min` under any policy but
KEEP_LATEST_COMMITS and then archives with a negative limit. We refuse such values before anything of
the table beyond `hoodie.properties` is read.
"""

from __future__ import annotations

from collections.abc import Iterable

from hudi_assets.config import (
    BoolOption,
    ConfigOption,
    DurationOption,
    EnumOption,
    IntOption,
    StrOption,
    WriteConfig,
)
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.findings import Finding, Severity, raise_if_refused


class CleaningPolicy:
    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"
    ALL = (KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS)


COMPACTION_TRIGGERS = ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST", "TIME_ELAPSED", "NUM_AND_TIME",
                       "NUM_OR_TIME")
OCC = "OPTIMISTIC_CONCURRENCY_CONTROL"

# ------------------------------------------------------------------------------ cleaning
CLEANER_COMMITS_RETAINED = IntOption(
    key="hoodie.cleaner.commits.retained", alternatives=("hoodie.clean.commits.retained",), default=10,
    minimum=1, doc="KEEP_LATEST_COMMITS: completed commits whose file slices the cleaner keeps")
CLEANER_HOURS_RETAINED = IntOption(
    key="hoodie.cleaner.hours.retained", alternatives=("hoodie.clean.hours.retained",), default=24,
    minimum=1, doc="KEEP_LATEST_BY_HOURS: hours of commits whose file slices the cleaner keeps")
CLEANER_FILE_VERSIONS_RETAINED = IntOption(
    key="hoodie.cleaner.fileversions.retained", alternatives=("hoodie.clean.fileversions.retained",),
    default=3, minimum=1, doc="KEEP_LATEST_FILE_VERSIONS: file slices kept in each file group")


def infer_policy(config: WriteConfig) -> str | None:
    """Hudi's inference: exactly one of the three retained keys set explicitly picks its policy."""
    commits, hours, versions = (config.is_set(o) for o in (CLEANER_COMMITS_RETAINED, CLEANER_HOURS_RETAINED,
                                                            CLEANER_FILE_VERSIONS_RETAINED))
    if hours and not commits and not versions:
        return CleaningPolicy.KEEP_LATEST_BY_HOURS
    if versions and not commits and not hours:
        return CleaningPolicy.KEEP_LATEST_FILE_VERSIONS
    return None


CLEANER_POLICY = EnumOption(
    key="hoodie.cleaner.policy", alternatives=("hoodie.clean.policy",),
    default=CleaningPolicy.KEEP_LATEST_COMMITS, choices=CleaningPolicy.ALL, infer=infer_policy,
    doc="what the cleaner keeps; unset, inferred from the one *.retained key set")
CLEAN_TRIGGER_STRATEGY = EnumOption(
    key="hoodie.clean.trigger.strategy", default="NUM_COMMITS", choices=("NUM_COMMITS",),
    doc="when a clean is scheduled (Hudi knows no other strategy)")
CLEAN_MAX_COMMITS = IntOption(
    key="hoodie.clean.max.commits", alternatives=("hoodie.clean.trigger.max.commits",), default=1,
    doc="completed commits since the last clean before a new clean is planned")
CLEANER_INCREMENTAL_MODE = BoolOption(
    key="hoodie.cleaner.incremental.mode", alternatives=("hoodie.clean.incremental.enabled",), default=True,
    doc="plan from the commits since the last clean instead of listing every partition")
WRITE_CONCURRENCY_MODE = EnumOption(
    key="hoodie.write.concurrency.mode", default="SINGLE_WRITER", choices=("SINGLE_WRITER", OCC),
    doc="how writers share the table; with several, failed writes are the cleaner's (LAZY)")


def infer_failed_writes_policy(config: WriteConfig) -> str | None:
    return "LAZY" if config.get(WRITE_CONCURRENCY_MODE) == OCC else None


FAILED_WRITES_CLEANER_POLICY = EnumOption(
    key="hoodie.cleaner.policy.failed.writes", alternatives=("hoodie.clean.failed.writes.policy",),
    default="EAGER", choices=("EAGER", "LAZY", "NEVER"), infer=infer_failed_writes_policy,
    doc="who rolls back failed writes; unset, LAZY (the cleaner) under OPTIMISTIC_CONCURRENCY_CONTROL")
CLEANER_PARALLELISM = IntOption(
    key="hoodie.cleaner.parallelism", alternatives=("hoodie.clean.parallelism",), default=200, minimum=1,
    doc="most partitions planned, and files deleted, at once")
ALLOW_MULTIPLE_CLEANS = BoolOption(
    key="hoodie.clean.allow.multiple", alternatives=("hoodie.clean.multiple.enabled",),
    default=False,  # 0.15 (HUDI-7616); 0.14 had true
    doc="plan a new clean while an earlier one is still pending")
CLEANER_BOOTSTRAP_BASE_FILE = BoolOption(
    key="hoodie.cleaner.delete.bootstrap.base.file",
    alternatives=("hoodie.clean.delete.bootstrap.base.file",), default=False,
    doc="also delete the bootstrap source file of a cleaned skeleton file")
# hudi-assets' own tunables (no Hudi counterpart), under its `hoodie.assets.` namespace.
CLEAN_DELETE_BATCH = IntOption(
    key="hoodie.assets.clean.delete.batch", default=1000, minimum=1,
    doc="files deleted per task of a clean (on S3 one DeleteObjects request, which takes at most 1000)")
CLEAN_PROGRESS_INTERVAL_MS = IntOption(
    key="hoodie.assets.clean.progress.interval.ms", default=5000, minimum=0,
    doc="milliseconds between two progress reports of a clean's deletes (the first and last always come)")
# Outside `hoodie.` on purpose: Hudi has no such guard, and a Java writer must never read it as its own.
CLEANER_READER_WINDOW = DurationOption(
    key="hudi_assets.cleaner.reader.window", default=0,
    doc="keep a file version that stopped being the latest (its superseding commit completed) less than "
        "this long ago, as Delta's retention-duration check; pending plans that would delete one are "
        "refused; 0: off, as in Hudi")
METADATA_ENABLE = BoolOption(
    key="hoodie.metadata.enable", default=True,
    doc="list partitions and files from the metadata table when the table has one (else from storage)")

# ------------------------------------------------------------------------------ archival
KEEP_MIN_COMMITS = IntOption(
    key="hoodie.keep.min.commits", alternatives=("hoodie.archive.min.commits",), default=20, minimum=1,
    doc="completed commits archiving leaves in the active timeline (raised to what the cleaner needs)")
KEEP_MAX_COMMITS = IntOption(
    key="hoodie.keep.max.commits", alternatives=("hoodie.archive.max.commits",), default=30, minimum=1,
    doc="completed commits in the active timeline above which archiving starts; more than keep.min")
COMMITS_ARCHIVAL_BATCH = IntOption(
    key="hoodie.commits.archival.batch", default=10, minimum=1,
    doc="instants per Avro data block of an archive file")
TIMELINE_COMPACTION_BATCH_SIZE = IntOption(
    key="hoodie.timeline.compaction.batch.size", default=10, minimum=1,
    doc="Hudi 1.x tables: history files of one layer merged into the next layer at once")
ARCHIVE_BEYOND_SAVEPOINT = BoolOption(
    key="hoodie.archive.beyond.savepoint", default=False,
    doc="archive past the earliest savepoint, keeping only the savepointed commits")
ARCHIVE_MERGE_ENABLE = BoolOption(
    key="hoodie.archive.merge.enable", default=False,
    doc="merge small archive files where the store cannot append")
ARCHIVE_MERGE_SMALL_FILE_LIMIT_BYTES = IntOption(
    key="hoodie.archive.merge.small.file.limit.bytes", default=20 * 1024 * 1024, minimum=0,
    doc="archive files below this size are merge candidates")
ARCHIVE_MERGE_FILES_BATCH_SIZE = IntOption(
    key="hoodie.archive.merge.files.batch.size", default=10, minimum=1,
    doc="small archive files needed before a merge")
FAIL_ON_TIMELINE_ARCHIVING = BoolOption(
    key="hoodie.fail.on.timeline.archiving", default=True,
    doc="fail when an instant cannot be converted for the archive, instead of skipping its record")

# ------------------------------------------------------------------------------ compaction (MOR archiving)
INLINE_COMPACT_NUM_DELTA_COMMITS = IntOption(
    key="hoodie.compact.inline.max.delta.commits", default=5,
    # Below 1 Hudi's CompactionUtils fails (an index of -1) when no delta commit follows the last compaction.
    minimum=1, doc="MOR: delta commits since the last compaction that archiving keeps")
INLINE_COMPACT_TRIGGER_STRATEGY = EnumOption(
    key="hoodie.compact.inline.trigger.strategy", default="NUM_COMMITS", choices=COMPACTION_TRIGGERS,
    doc="MOR: count-based strategies (NUM_COMMITS, NUM_AND_TIME) fence archiving at the delta commits kept")

PARQUET_SMALL_FILE_LIMIT = IntOption(
    key="hoodie.parquet.small.file.limit", default=104_857_600, minimum=0,
    doc="base files smaller than this many bytes are small files, which writers add inserts to "
        "(the status report counts them per partition)")

METADATA_COMPACT_MAX_DELTA_COMMITS = IntOption(
    key="hoodie.metadata.compact.max.delta.commits", default=10, minimum=1,
    doc="metadata table: deltacommits since its last compaction that make the next one due")
METADATA_COLUMN_STATS_COLUMNS = StrOption(
    key="hoodie.metadata.index.column.stats.column.list", default="",
    doc="columns the metadata table's column_stats index covers (comma-separated); unset: a clean "
        "deletes the stats the index holds for each deleted file")

CLEAN_OPTIONS: tuple[ConfigOption, ...] = (
    CLEANER_POLICY, CLEANER_COMMITS_RETAINED, CLEANER_HOURS_RETAINED, CLEANER_FILE_VERSIONS_RETAINED,
    CLEAN_TRIGGER_STRATEGY, CLEAN_MAX_COMMITS, CLEANER_INCREMENTAL_MODE, FAILED_WRITES_CLEANER_POLICY,
    WRITE_CONCURRENCY_MODE, CLEANER_PARALLELISM, ALLOW_MULTIPLE_CLEANS, CLEANER_BOOTSTRAP_BASE_FILE,
    METADATA_ENABLE, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, METADATA_COLUMN_STATS_COLUMNS, CLEAN_DELETE_BATCH,
    CLEAN_PROGRESS_INTERVAL_MS, CLEANER_READER_WINDOW)
# The archiver also reads the cleaner's retention settings (its keep.min follows the cleaner).
ARCHIVE_OPTIONS: tuple[ConfigOption, ...] = (
    KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, COMMITS_ARCHIVAL_BATCH, ARCHIVE_BEYOND_SAVEPOINT,
    ARCHIVE_MERGE_ENABLE, ARCHIVE_MERGE_SMALL_FILE_LIMIT_BYTES, ARCHIVE_MERGE_FILES_BATCH_SIZE,
    FAIL_ON_TIMELINE_ARCHIVING, INLINE_COMPACT_NUM_DELTA_COMMITS, INLINE_COMPACT_TRIGGER_STRATEGY,
    TIMELINE_COMPACTION_BATCH_SIZE, CLEANER_POLICY, CLEANER_COMMITS_RETAINED, CLEANER_HOURS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED)

# `hudi-assets status` reads these beside the cleaner's and the archiver's.
STATUS_OPTIONS: tuple[ConfigOption, ...] = (PARQUET_SMALL_FILE_LIMIT,)

# The metadata table's services read these of the data table (its own settings derive from them).
METADATA_SERVICES_OPTIONS: tuple[ConfigOption, ...] = (
    METADATA_COMPACT_MAX_DELTA_COMMITS, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, FAILED_WRITES_CLEANER_POLICY,
    CLEAN_DELETE_BATCH)

# ------------------------------------------------------------------------------ checks across settings
RETAINED_BELOW_KEEP_MIN = f"{CLEANER_COMMITS_RETAINED.key} must be < {KEEP_MIN_COMMITS.key}"
# The settings `check` reads: the cleaner's retention, the archiver's window, who rolls back failed writes.
CHECKED_OPTIONS: tuple[ConfigOption, ...] = (
    CLEANER_POLICY, CLEANER_COMMITS_RETAINED, CLEANER_HOURS_RETAINED, CLEANER_FILE_VERSIONS_RETAINED,
    CLEAN_TRIGGER_STRATEGY, KEEP_MIN_COMMITS, KEEP_MAX_COMMITS, WRITE_CONCURRENCY_MODE,
    FAILED_WRITES_CLEANER_POLICY)


class Rule:
    """The rules `check` applies, by name (a finding's `rule`)."""

    SETTING_VALUE = "setting_value"
    KEEP_MIN_BELOW_KEEP_MAX = "keep_min_below_keep_max"
    FAILED_WRITES_UNDER_OCC = "lazy_failed_writes_under_occ"
    RETAINED_BELOW_KEEP_MIN = "retained_below_keep_min"


def check(config: WriteConfig) -> list[Finding]:
    """HoodieWriteConfig.validate for the settings maintenance reads, stricter (see the module doc), as
    findings: every face renders these, and only these, with their wording and severity.

    ERROR: a checked setting that does not parse or is out of bounds (whatever the policy);
    keep.min >= keep.max (Hudi checks it under KEEP_LATEST_COMMITS only, but under the other policies it
    makes the archiver's limit negative); EAGER failed-writes cleaning under optimistic concurrency.
    WARN, as in Hudi: commits.retained >= keep.min under KEEP_LATEST_COMMITS, since the archiver raises
    its minimum to what the cleaner still needs (`archive.config.keep_range`).
    """
    findings: list[Finding] = []
    values: dict[str, int | str] = {}
    for option in CHECKED_OPTIONS:
        try:
            values[option.key] = config.get(option)
        except InvalidConfigError as exc:  # an inference reading a bad setting repeats its message
            if all(f.message != str(exc) for f in findings):
                findings.append(Finding(Rule.SETTING_VALUE, Severity.ERROR, str(exc), (config.name(option),)))

    def finding(rule: str, severity: Severity, message: str, *options: ConfigOption) -> None:
        findings.append(Finding(rule, severity, message, tuple(config.name(o) for o in options)))

    keep_min, keep_max = values.get(KEEP_MIN_COMMITS.key), values.get(KEEP_MAX_COMMITS.key)
    retained, policy = values.get(CLEANER_COMMITS_RETAINED.key), values.get(CLEANER_POLICY.key)
    mode, failed_writes = values.get(WRITE_CONCURRENCY_MODE.key), values.get(FAILED_WRITES_CLEANER_POLICY.key)
    if keep_min is not None and keep_max is not None and keep_min >= keep_max:
        finding(Rule.KEEP_MIN_BELOW_KEEP_MAX, Severity.ERROR,
                f"Increase {config.describe(KEEP_MAX_COMMITS)} to be greater than "
                f"{config.describe(KEEP_MIN_COMMITS)}", KEEP_MIN_COMMITS, KEEP_MAX_COMMITS)
    if mode == OCC and failed_writes == "EAGER":
        finding(Rule.FAILED_WRITES_UNDER_OCC, Severity.ERROR,
                f"{config.describe(FAILED_WRITES_CLEANER_POLICY)} cannot be used with "
                f"{config.describe(WRITE_CONCURRENCY_MODE)}: use LAZY",
                FAILED_WRITES_CLEANER_POLICY, WRITE_CONCURRENCY_MODE)
    if (policy == CleaningPolicy.KEEP_LATEST_COMMITS and retained is not None and keep_min is not None
            and retained >= keep_min):
        finding(Rule.RETAINED_BELOW_KEEP_MIN, Severity.WARN,
                f"{RETAINED_BELOW_KEEP_MIN}: {config.describe(CLEANER_COMMITS_RETAINED)}, "
                f"{config.describe(KEEP_MIN_COMMITS)}; the archiver raises its minimum to keep what the "
                "cleaner retains", CLEANER_COMMITS_RETAINED, KEEP_MIN_COMMITS)
    return findings


def validate(config: WriteConfig) -> None:
    """Refuse the settings when `check` finds an ERROR (`SettingsRefusedError`); the faces have rendered
    the warnings already."""
    raise_if_refused(check(config))


def settings_epilog(options: Iterable[ConfigOption]) -> str:
    """The settings a command reads, for its --help: key=default, alternatives, values, doc."""
    return "\n".join(["settings read, with defaults (hoodie.properties < --props FILE < --hoodie-conf):",
                      *(option.help() for option in options)])


# ------------------------------------------------------------------------------ metrics
# Hudi 0.15's HoodieMetricsConfig and HoodieMetricsPrometheusConfig (keys, defaults); the JVM reporters
# (GRAPHITE, JMX, DATADOG, ...) are the writer's: hudi-assets reports to a Prometheus push gateway or a
# node_exporter textfile (`hudi_assets.metrics`).
METRICS_REPORTER_TYPES = ("GRAPHITE", "INMEMORY", "JMX", "DATADOG", "CONSOLE", "PROMETHEUS_PUSHGATEWAY",
                          "PROMETHEUS", "CLOUDWATCH", "M3")
METRICS_ON = BoolOption(key="hoodie.metrics.on", default=False,
                        doc="report each table service's metrics under HoodieMetrics' names")
METRICS_REPORTER_TYPE = EnumOption(
    key="hoodie.metrics.reporter.type", default="GRAPHITE", choices=METRICS_REPORTER_TYPES,
    doc="where metrics go; hudi-assets pushes for PROMETHEUS_PUSHGATEWAY (any type: the textfile, if set)")


def infer_metrics_prefix(config: WriteConfig) -> str | None:
    return config.get(TABLE_NAME) or None


METRICS_REPORTER_PREFIX = StrOption(
    key="hoodie.metrics.reporter.metricsname.prefix", default="", infer=infer_metrics_prefix,
    doc="first part of every metric name (dots become '_'); unset, the table name")
PUSHGATEWAY_HOST = StrOption(key="hoodie.metrics.pushgateway.host", default="localhost",
                             doc="the Prometheus push gateway's host")
PUSHGATEWAY_PORT = IntOption(key="hoodie.metrics.pushgateway.port", default=9091, minimum=1,
                             doc="the push gateway's port (443: https)")
PUSHGATEWAY_JOB_NAME = StrOption(key="hoodie.metrics.pushgateway.job.name", default="",
                                 doc="the job the metrics are pushed under")
PUSHGATEWAY_RANDOM_JOB_NAME_SUFFIX = BoolOption(
    key="hoodie.metrics.pushgateway.random.job.name.suffix", default=True,
    doc="append a random number to the job name, as Hudi does (each run then pushes a group of its own)")
PUSHGATEWAY_LABELS = StrOption(key="hoodie.metrics.pushgateway.report.labels", default="",
                               doc="grouping labels of the push, as key:value pairs separated by commas")
METRICS_TEXTFILE = StrOption(
    key="hoodie.assets.metrics.prometheus.textfile", default="",
    doc="a *.prom file for node_exporter's textfile collector, rewritten atomically after each run with "
        "the metrics it reported (other metrics in the file are kept)")
METRICS_OPTIONS: tuple[ConfigOption, ...] = (
    METRICS_ON, METRICS_REPORTER_TYPE, METRICS_REPORTER_PREFIX, PUSHGATEWAY_HOST, PUSHGATEWAY_PORT,
    PUSHGATEWAY_JOB_NAME, PUSHGATEWAY_RANDOM_JOB_NAME_SUFFIX, PUSHGATEWAY_LABELS, METRICS_TEXTFILE)

# ---------------------------------------------- locks, heartbeats, rollback (shared with the writers)
TABLE_NAME = StrOption(key="hoodie.table.name", default="", doc="the table's name (hoodie.properties)")
LOCK_PROVIDER = StrOption(
    key="hoodie.write.lock.provider", default="",
    doc="Hudi lock provider class shared with the table's writers; unset: hudi-assets' own table lock")
LOCK_ACQUIRE_WAIT_TIMEOUT_MS = IntOption(
    key="hoodie.write.lock.wait_time_ms", default=60_000, minimum=0,
    doc="how long one attempt waits for the lock (DynamoDB: the lease duration)")
LOCK_ACQUIRE_NUM_RETRIES = IntOption(
    key="hoodie.write.lock.num_retries", default=15, minimum=0, doc="provider-level retries of one attempt")
LOCK_ACQUIRE_RETRY_WAIT_TIME_MS = IntOption(
    key="hoodie.write.lock.wait_time_ms_between_retry", default=1_000, minimum=0,
    doc="provider-level wait between retries")
LOCK_ACQUIRE_RETRY_MAX_WAIT_TIME_MS = IntOption(
    key="hoodie.write.lock.max_wait_time_ms_between_retry", default=16_000, minimum=0,
    doc="provider-level longest wait between retries")
LOCK_ACQUIRE_CLIENT_NUM_RETRIES = IntOption(
    key="hoodie.write.lock.client.num_retries", default=50, minimum=0,
    doc="lock-manager retries before giving up")
LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS = IntOption(
    key="hoodie.write.lock.client.wait_time_ms_between_retry", default=5_000, minimum=0,
    doc="lock-manager wait between retries")
FILESYSTEM_LOCK_PATH = StrOption(
    key="hoodie.write.lock.filesystem.path", default="",
    doc="folder of FileSystemBasedLockProvider's `lock` file (default: the table's .hoodie)")
FILESYSTEM_LOCK_EXPIRE = IntOption(
    key="hoodie.write.lock.filesystem.expire", default=0, minimum=0,
    doc="minutes after which a file lock counts as expired (0: never)")
HOODIE_FS_ATOMIC_CREATION_SUPPORT = StrOption(
    key="hoodie.fs.atomic_creation.support", default="",
    doc="extra schemes (comma-separated) whose stores create files atomically")
ZK_CONNECT_URL = StrOption(key="hoodie.write.lock.zookeeper.url", default="",
                           doc="ZooKeeper connect string (host:port[,host:port])")
ZK_BASE_PATH = StrOption(key="hoodie.write.lock.zookeeper.base_path", default="",
                         doc="znode under which the table's lock lives")
ZK_LOCK_KEY = StrOption(key="hoodie.write.lock.zookeeper.lock_key", default="",
                        doc="the lock's znode name (default: the table name)")
ZK_SESSION_TIMEOUT_MS = IntOption(key="hoodie.write.lock.zookeeper.session_timeout_ms", default=60_000,
                                  minimum=1, doc="ZooKeeper session timeout")
ZK_CONNECTION_TIMEOUT_MS = IntOption(key="hoodie.write.lock.zookeeper.connection_timeout_ms",
                                     default=15_000, minimum=1, doc="ZooKeeper connection timeout")
DYNAMODB_LOCK_TABLE_NAME = StrOption(key="hoodie.write.lock.dynamodb.table", default="hudi_locks",
                                     doc="DynamoDB table holding the locks")
DYNAMODB_LOCK_PARTITION_KEY = StrOption(key="hoodie.write.lock.dynamodb.partition_key", default="",
                                        doc="the lock's partition key value (default: the table name)")
DYNAMODB_LOCK_REGION = StrOption(key="hoodie.write.lock.dynamodb.region", default="",
                                 doc="AWS region (default: AWS_REGION, else us-east-1)")
DYNAMODB_LOCK_BILLING_MODE = EnumOption(key="hoodie.write.lock.dynamodb.billing_mode",
                                        default="PAY_PER_REQUEST", choices=("PAY_PER_REQUEST", "PROVISIONED"),
                                        doc="billing mode of a lock table created by us")
DYNAMODB_LOCK_READ_CAPACITY = IntOption(key="hoodie.write.lock.dynamodb.read_capacity", default=20, minimum=1,
                                        doc="read capacity of a provisioned lock table")
DYNAMODB_LOCK_WRITE_CAPACITY = IntOption(key="hoodie.write.lock.dynamodb.write_capacity", default=10,
                                         minimum=1, doc="write capacity of a provisioned lock table")
DYNAMODB_LOCK_TABLE_CREATION_TIMEOUT = IntOption(
    key="hoodie.write.lock.dynamodb.table_creation_timeout", default=120_000, minimum=0,
    doc="milliseconds to wait for a created lock table to become active")
DYNAMODB_ENDPOINT_URL = StrOption(key="hoodie.write.lock.dynamodb.endpoint_url", default="",
                                  doc="DynamoDB endpoint (tests, local DynamoDB)")
AWS_ACCESS_KEY = StrOption(key="hoodie.aws.access.key", default="", doc="AWS access key for DynamoDB")
AWS_SECRET_KEY = StrOption(key="hoodie.aws.secret.key", default="", doc="AWS secret key for DynamoDB")
AWS_SESSION_TOKEN = StrOption(key="hoodie.aws.session.token", default="",
                              doc="AWS session token for DynamoDB")
HEARTBEAT_INTERVAL_MS = IntOption(key="hoodie.client.heartbeat.interval_in_ms", default=60_000, minimum=1,
                                  doc="how often a writer refreshes its heartbeat file")
HEARTBEAT_TOLERABLE_MISSES = IntOption(key="hoodie.client.heartbeat.tolerable.misses", default=2, minimum=1,
                                       doc="missed heartbeats after which a pending write counts as failed")
ROLLBACK_USING_MARKERS = BoolOption(key="hoodie.rollback.using.markers", default=True,
                                    doc="roll back failed writes from their markers (else by listing)")
# Hudi 1.x's HoodieTimeGeneratorConfig; its default, as we always run beside another process (1.x infers
# 1 ms only for the in-process lock provider).
MAX_EXPECTED_CLOCK_SKEW_MS = IntOption(
    key="hoodie.time.generator.max_expected_clock_skew_ms", default=200, minimum=0,
    doc="how far (ms) an instant on the timeline may lie ahead of this clock; a later one is refused")

# Read by the lock every run takes, and by the rollback of failed writes that LAZY cleaning runs.
WRITER_SHARED_OPTIONS: tuple[ConfigOption, ...] = (
    TABLE_NAME, LOCK_PROVIDER, LOCK_ACQUIRE_WAIT_TIMEOUT_MS, LOCK_ACQUIRE_NUM_RETRIES,
    LOCK_ACQUIRE_RETRY_WAIT_TIME_MS, LOCK_ACQUIRE_RETRY_MAX_WAIT_TIME_MS, LOCK_ACQUIRE_CLIENT_NUM_RETRIES,
    LOCK_ACQUIRE_CLIENT_RETRY_WAIT_TIME_MS, FILESYSTEM_LOCK_PATH, FILESYSTEM_LOCK_EXPIRE,
    HOODIE_FS_ATOMIC_CREATION_SUPPORT, ZK_CONNECT_URL, ZK_BASE_PATH, ZK_LOCK_KEY, ZK_SESSION_TIMEOUT_MS,
    ZK_CONNECTION_TIMEOUT_MS, DYNAMODB_LOCK_TABLE_NAME, DYNAMODB_LOCK_PARTITION_KEY, DYNAMODB_LOCK_REGION,
    DYNAMODB_LOCK_BILLING_MODE, DYNAMODB_LOCK_READ_CAPACITY, DYNAMODB_LOCK_WRITE_CAPACITY,
    DYNAMODB_LOCK_TABLE_CREATION_TIMEOUT, DYNAMODB_ENDPOINT_URL, AWS_ACCESS_KEY, AWS_SECRET_KEY,
    AWS_SESSION_TOKEN, HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES, ROLLBACK_USING_MARKERS,
    MAX_EXPECTED_CLOCK_SKEW_MS)
