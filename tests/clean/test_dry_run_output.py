"""`clean --dry-run`: a summary by default, every file with `--list-files`, the whole plan with `--json`;
sizes come from the planner's one listing of each partition and agree with the files on disk."""

from __future__ import annotations

import json

from support.builders import demo_table

from hudi_assets.clean import CleanConfig, CleanPlanner
from hudi_assets.cli import main
from hudi_assets.config import WriteConfig
from hudi_assets.table import HoodieTable

RETAIN = ["--hoodie-conf", "hoodie.cleaner.commits.retained=3"]


DEMO = {"name": "t", "partitions": 3, "commits": 12, "files_per_partition": 2, "records_per_file": 3,
        "update_fraction": 0.5, "bloom_entries": 1000, "seed": 5}


def _dry_run(path, capsys, *extra):
    before = sorted(p.relative_to(path) for p in path.rglob("*"))
    assert main(["clean", str(path), "--engine", "local", "--dry-run", *RETAIN, *extra]) == 0
    assert sorted(p.relative_to(path) for p in path.rglob("*")) == before  # nothing written
    return capsys.readouterr().out


def test_json_is_the_plan_with_sizes_from_disk(tmp_path, capsys):
    path = demo_table(tmp_path / "t", "MERGE_ON_READ", **DEMO)
    out = json.loads(_dry_run(path, capsys, "--json"))
    table = HoodieTable(str(path))
    config = CleanConfig.from_write_config(
        WriteConfig.load(table.config.props, None, {"hoodie.cleaner.commits.retained": "3"}))
    plan = CleanPlanner(table, config).plan()
    assert out["policy"] == plan.policy == "KEEP_LATEST_COMMITS"
    assert out["ectr"] == plan.ectr_timestamp and out["ectr_action"] == plan.earliest_instant_to_retain.action
    assert out["last_completed_commit"] == plan.last_completed_commit_timestamp
    assert [p["partition"] for p in out["partitions"]] == list(plan.file_paths_to_delete)  # plan order
    total = 0
    for entry in out["partitions"]:
        planned = [f.file_path for f in plan.file_paths_to_delete[entry["partition"]]]
        assert [f["path"] for f in entry["files"]] == planned
        for f in entry["files"]:
            on_disk = (path / table.storage.relativize(f["path"])).stat().st_size
            assert f["size"] == on_disk > 0
        assert entry["bytes"] == sum(f["size"] for f in entry["files"])
        total += entry["bytes"]
    assert out["totals"] == {"files": plan.total_files, "bytes": total,
                             "partitions": len(plan.file_paths_to_delete)}
    assert plan.total_files > 0 and out["partitions_to_delete"] == plan.partitions_to_delete


def test_summary_by_default_files_on_request(tmp_path, capsys):
    path = demo_table(tmp_path / "t", "MERGE_ON_READ", **DEMO)
    summary = _dry_run(path, capsys)
    listed = _dry_run(path, capsys, "--list-files")
    plan = json.loads(_dry_run(path, capsys, "--json"))
    names = [f["path"].rpartition("/")[2] for p in plan["partitions"] for f in p["files"]]
    assert not any(name in summary for name in names)
    assert all(f"  {name}  " in listed for name in names)
    for entry in plan["partitions"]:
        line = f"partition {entry['partition']}: {len(entry['files'])} files, {entry['bytes']} bytes"
        assert line in summary and line in listed
    assert (f"dry run: {plan['totals']['files']} files, {plan['totals']['bytes']} bytes would be deleted "
            f"in {plan['totals']['partitions']} partitions; nothing written") in summary


def test_json_without_dry_run_is_bad_input(tmp_path, capsys):
    path = demo_table(tmp_path / "t", "MERGE_ON_READ", **DEMO)
    assert main(["clean", str(path), "--engine", "local", "--json"]) == 2
    assert "--dry-run" in capsys.readouterr().err


def test_json_text_is_what_json_dumps_writes_also_for_paths_that_need_escapes(tmp_path, capsys):
    """Paths Hudi writes go out in one format per partition, others escaped one by one: either way
    the text is `json.dumps` of the object it parses to, and the paths are the plan's."""
    for name in ("plain", 'quote"and\\backslash-é', "tab\t", "del\x7f"):
        path = demo_table(tmp_path / name, "MERGE_ON_READ", **DEMO)
        raw = _dry_run(path, capsys, "--json")
        out = json.loads(raw)
        assert raw == json.dumps(out) + "\n"
        paths = [f["path"] for entry in out["partitions"] for f in entry["files"]]
        assert paths and all(p.startswith(f"file:{path}/") for p in paths)
