"""The settings registry: every key declared once, and the checks run when a config is built."""

from __future__ import annotations

import pytest

from hudi_assets import config_options as opt
from hudi_assets.archive.config import ArchiveConfig
from hudi_assets.clean.config import CleanConfig, CleaningPolicy
from hudi_assets.config import ConfigOption, WriteConfig
from hudi_assets.exceptions import InvalidConfigError
from hudi_assets.findings import Finding, SettingsRefusedError, Severity

OPTIONS = [v for v in vars(opt).values() if isinstance(v, ConfigOption)]
POLICY_KEYS = {  # the retained key whose explicit setting selects each policy
    CleaningPolicy.KEEP_LATEST_COMMITS: "hoodie.cleaner.commits.retained=4",
    CleaningPolicy.KEEP_LATEST_BY_HOURS: "hoodie.cleaner.hours.retained=4",
    CleaningPolicy.KEEP_LATEST_FILE_VERSIONS: "hoodie.cleaner.fileversions.retained=4",
}


def _clean(*pairs: str) -> CleanConfig:
    return CleanConfig.from_write_config(WriteConfig.load(overrides=list(pairs)))


def _archive(*pairs: str) -> ArchiveConfig:
    return ArchiveConfig.from_write_config(WriteConfig.load(overrides=list(pairs)))


def test_every_name_is_declared_once_and_every_option_is_read():
    names = [name for option in OPTIONS for name in option.names]
    assert len(names) == len(set(names))
    assert set(opt.CLEAN_OPTIONS) | set(opt.ARCHIVE_OPTIONS) | set(opt.WRITER_SHARED_OPTIONS) \
        | set(opt.METADATA_SERVICES_OPTIONS) | set(opt.METRICS_OPTIONS) | set(opt.STATUS_OPTIONS) \
        == set(OPTIONS)


def test_defaults_come_from_the_registry():
    assert _clean() == CleanConfig()
    assert _archive() == ArchiveConfig(cleaner=CleanConfig())
    assert (CleanConfig().file_versions_retained, ArchiveConfig(cleaner=CleanConfig()).min_commits) == (3, 20)


def test_archiver_reads_the_alias_and_its_cleaner_from_the_same_config():
    config = _archive("hoodie.archive.min.commits=40", "hoodie.archive.max.commits=50",
                      "hoodie.clean.fileversions.retained=2")
    assert (config.min_commits, config.max_commits) == (40, 50)
    assert config.cleaner == _clean("hoodie.clean.fileversions.retained=2", "hoodie.keep.max.commits=50",
                                    "hoodie.keep.min.commits=40")
    assert (config.cleaner.policy, config.cleaner.file_versions_retained) == ("KEEP_LATEST_FILE_VERSIONS", 2)


BAD_FOR_EVERY_POLICY = [
    (["hoodie.cleaner.fileversions.retained=0"], "hoodie.cleaner.fileversions.retained='0'"),
    (["hoodie.cleaner.fileversions.retained=-1"], "hoodie.cleaner.fileversions.retained='-1'"),
    (["hoodie.clean.commits.retained=0"], "hoodie.clean.commits.retained='0'"),
    (["hoodie.cleaner.hours.retained=0"], "hoodie.cleaner.hours.retained='0'"),
    (["hoodie.keep.min.commits=0"], "hoodie.keep.min.commits='0'"),
    (["hoodie.keep.max.commits=-3"], "hoodie.keep.max.commits='-3'"),
    (["hoodie.keep.min.commits=9", "hoodie.keep.max.commits=5"],
     "Increase hoodie.keep.max.commits=5 (from --hoodie-conf) to be greater than "
     "hoodie.keep.min.commits=9 (from --hoodie-conf)"),
    (["hoodie.keep.min.commits=30"], "Increase hoodie.keep.max.commits=30 (default)"),
    (["hoodie.archive.min.commits=40"], "hoodie.archive.min.commits=40 (from --hoodie-conf)"),
    (["hoodie.clean.trigger.strategy=TIME"], "hoodie.clean.trigger.strategy='TIME'"),
]


@pytest.mark.parametrize("policy", CleaningPolicy.ALL)
@pytest.mark.parametrize(("pairs", "message"), BAD_FOR_EVERY_POLICY)
def test_bad_settings_are_refused_under_every_policy(policy, pairs, message):
    chosen = [f"hoodie.cleaner.policy={policy}", *pairs]
    for build in (_clean, _archive):
        with pytest.raises(InvalidConfigError) as raised:
            build(*chosen)
        assert message in str(raised.value)


def test_inferred_policy_is_validated_too():
    for policy, pair in POLICY_KEYS.items():
        assert _clean(pair).policy == policy
        with pytest.raises(InvalidConfigError, match=r"hoodie\.keep\.max\.commits=3"):
            _clean(pair, "hoodie.keep.max.commits=3", "hoodie.keep.min.commits=3")


@pytest.mark.parametrize(("pair", "key"), [
    ("hoodie.commits.archival.batch=0", "hoodie.commits.archival.batch"),
    ("hoodie.compact.inline.max.delta.commits=0", "hoodie.compact.inline.max.delta.commits"),
    ("hoodie.archive.merge.files.batch.size=0", "hoodie.archive.merge.files.batch.size"),
    ("hoodie.compact.inline.trigger.strategy=SOMETIMES", "hoodie.compact.inline.trigger.strategy"),
])
def test_archive_only_settings_refused_by_the_archiver(pair, key):
    with pytest.raises(InvalidConfigError, match=f"{key}="):
        _archive(pair)
    assert _clean(pair) == CleanConfig()  # the cleaner does not read them


def _findings(*pairs: str) -> list[Finding]:
    return opt.check(WriteConfig.load(overrides=list(pairs)))


def test_retained_not_below_keep_min_is_a_warning_under_keep_latest_commits_only():
    config = _archive("hoodie.cleaner.commits.retained=25", "hoodie.keep.min.commits=20")
    assert config.cleaner.commits_retained == 25 and config.min_commits == 20  # a warning refuses nothing
    assert _findings("hoodie.cleaner.commits.retained=25", "hoodie.archive.min.commits=20") == [Finding(
        "retained_below_keep_min", Severity.WARN,
        "hoodie.cleaner.commits.retained must be < hoodie.keep.min.commits: "
        "hoodie.cleaner.commits.retained=25 (from --hoodie-conf), hoodie.archive.min.commits=20 (from "
        "--hoodie-conf); the archiver raises its minimum to keep what the cleaner retains",
        ("hoodie.cleaner.commits.retained", "hoodie.archive.min.commits"))]
    assert _findings("hoodie.cleaner.policy=KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.commits.retained=25",
                     "hoodie.keep.min.commits=20") == []
    assert _findings("hoodie.cleaner.commits.retained=19", "hoodie.keep.min.commits=20") == []


def test_every_error_is_a_finding_naming_its_keys():
    findings = _findings("hoodie.clean.fileversions.retained=0", "hoodie.cleaner.policy=KEEP_SOME",
                         "hoodie.keep.min.commits=25", "hoodie.keep.max.commits=22",
                         "hoodie.write.concurrency.mode=MULTI")
    assert [(f.rule, f.severity, f.keys) for f in findings] == [
        ("setting_value", Severity.ERROR, ("hoodie.cleaner.policy",)),
        ("setting_value", Severity.ERROR, ("hoodie.clean.fileversions.retained",)),
        ("setting_value", Severity.ERROR, ("hoodie.write.concurrency.mode",)),
        ("keep_min_below_keep_max", Severity.ERROR, ("hoodie.keep.min.commits", "hoodie.keep.max.commits"))]
    with pytest.raises(SettingsRefusedError) as raised:
        _clean("hoodie.clean.fileversions.retained=0", "hoodie.keep.min.commits=25",
               "hoodie.keep.max.commits=22")
    assert str(raised.value) == (
        "hoodie.clean.fileversions.retained='0' (from --hoodie-conf): expected an integer >= 1; Increase "
        "hoodie.keep.max.commits=22 (from --hoodie-conf) to be greater than hoodie.keep.min.commits=25 (from "
        "--hoodie-conf)")
    assert [f.rule for f in raised.value.findings] == ["setting_value", "keep_min_below_keep_max"]


def test_failed_writes_policy_follows_the_concurrency_mode():
    occ = "hoodie.write.concurrency.mode=optimistic_concurrency_control"
    assert _clean(occ).failed_writes_policy == "LAZY"
    assert _clean().failed_writes_policy == "EAGER"
    with pytest.raises(InvalidConfigError, match=r"hoodie\.clean\.failed\.writes\.policy=EAGER \(from "
                                                 r"--hoodie-conf\) cannot be used with"):
        _clean(occ, "hoodie.clean.failed.writes.policy=EAGER")
    with pytest.raises(InvalidConfigError, match=r"hoodie\.write\.concurrency\.mode='MULTI'"):
        _clean("hoodie.write.concurrency.mode=MULTI")


def test_epilog_lists_every_key_with_its_default_and_alternatives():
    text = opt.settings_epilog(opt.ARCHIVE_OPTIONS)
    for option in opt.ARCHIVE_OPTIONS:
        assert f"\n  {option.key}=" in text
    assert "  hoodie.keep.min.commits=20  (or hoodie.archive.min.commits)\n" in text
    assert "hoodie.archive.merge.enable=false\n" in text
    assert "(an integer >= 1)" in text
