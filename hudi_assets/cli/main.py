"""The `hudi-assets` command line: the parser, the arguments every table command shares and the exit
codes; each subcommand is a module of its own beside this one (`COMMANDS`).

Conventions follow Hudi's own utilities: `--hoodie-conf key=value` once per key, `--props FILE`;
exit 2 for bad input or a refused table, 1 for a failure while working, 0 for success.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from hudi_assets.exceptions import HudiAssetsError, HudiInputError

if TYPE_CHECKING:
    from hudi_assets.config import ConfigOption, WriteConfig
    from hudi_assets.engine import Engine
    from hudi_assets.table import HoodieTable

log = logging.getLogger("hudi_assets")

# Each subcommand and its line in `hudi-assets --help`. The module `hudi_assets.cli.<command>` adds its
# arguments (`add_parser(subparsers)` sets `func=run(args)`) and is imported only when that command
# runs: `--help` and every other command skip its imports.
COMMANDS: dict[str, str] = {
    "timeline": "show the active and archived timeline of a table",
    "demo": "write demo COW and MOR tables (table version 6 or 9) under PATH",
    "clean": "clean old file versions as Hudi 0.15's cleaner does",
    "archive": "archive old instants of the active timeline (Hudi 0.15 rules; 1.x's on 1.x tables)",
    "rollback": "roll back a failed (pending) write: delete its files, remove it from the timeline",
    "metadata": "show a table's metadata table and compact, clean and archive it (table versions 6, 8, 9)",
    "savepoint": "create, list or delete savepoints (versions the cleaner and archiver keep)",
    "repair": "repair a table's storage",
    "status": "what is due, what is blocked and why; backlog, file sizes, metadata table",
}


def parse_storage_options(pairs: Sequence[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise HudiInputError(f"--storage-option {pair!r}: expected key=value")
        options[key] = value
    return options


def add_settings_parser(subparsers, name: str, options: Iterable[ConfigOption],
                        **kwargs) -> argparse.ArgumentParser:
    """A subcommand whose `--help` ends with the hoodie.* settings it reads, laid out as written."""
    from hudi_assets.config_options import settings_epilog

    return subparsers.add_parser(name, epilog=settings_epilog(options),
                                 formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)


def add_table_arguments(parser: argparse.ArgumentParser, config: bool = False, engine: bool = False) -> None:
    """The arguments every table command shares; `config` adds Hudi's `--props`/`--hoodie-conf`,
    `engine` the choice of engine and where Spark runs."""
    parser.add_argument("path", help="base path of the Hudi table (local path, file://, s3://, ...)")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="pyarrow filesystem option, e.g. endpoint_override=127.0.0.1:9000 (repeat); "
                             "S3 stops retrying an unreachable endpoint after 3 attempts, GCS after 15 s "
                             "(retry_time_limit=SECONDS)")
    if config:
        parser.add_argument("--props", metavar="FILE", help="properties file of hoodie.* settings")
        parser.add_argument("--hoodie-conf", action="append", default=[], metavar="KEY=VALUE",
                            help="a hoodie.* setting; repeat once per key (overrides --props)")
    if engine:
        from hudi_assets.engine import DEFAULT_ENGINE, ENGINES

        parser.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE,
                            help="where per-partition and per-file work runs (default: auto, spark when "
                                 "a Spark master or Spark Connect server is configured, else local)")
        parser.add_argument("--spark-master", metavar="URL",
                            help="Spark master (default: spark.master from config, else local[*])")
        parser.add_argument("--spark-remote", metavar="sc://HOST:PORT",
                            help="run on this Spark Connect server, starting no JVM (default: spark.remote "
                                 "from config, else $SPARK_REMOTE, unless --spark-master is given); "
                                 "python -m hudi_assets.spark_connect start starts one")
        parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                            help="a Spark setting (repeat)")


def open_table(args: argparse.Namespace) -> HoodieTable:
    """The table, with the command's `--props` and `--hoodie-conf` in its write config (where its lock
    provider is chosen). A service the table's version does not have is refused by the service object
    itself (`TableConfig.check_service`), whichever face builds it."""
    from hudi_assets.config import CLI_NAMES, parse_overrides
    from hudi_assets.table import HoodieTable

    return HoodieTable(args.path, parse_storage_options(args.storage_option),
                       hoodie_conf=parse_overrides(getattr(args, "hoodie_conf", [])),
                       props_file=getattr(args, "props", None), conf_names=CLI_NAMES)


def add_strict_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="refuse (exit 2) on a warning about the settings too, not only on an error")


def check_settings(table: HoodieTable, strict: bool = False) -> None:
    """Print the findings on the table's settings, each a line; an ERROR (any finding with --strict)
    refuses with exit 2 before anything but hoodie.properties is read."""
    from hudi_assets.config_options import check
    from hudi_assets.findings import raise_if_refused, refused

    findings = check(table.write_config)
    refusing = refused(findings, strict)
    for finding in findings:
        if finding not in refusing:
            print(f"hudi-assets: warning: {finding.message}", file=sys.stderr)
    raise_if_refused(refusing, strict, "--strict")


def open_engine(args: argparse.Namespace, config: WriteConfig) -> Engine:
    from hudi_assets.config import parse_overrides
    from hudi_assets.engine import create_engine

    spark_conf = {k: v for k, v in config.props.items() if k.startswith("spark.")}
    spark_conf.update(parse_overrides(args.spark_conf))
    return create_engine(args.engine, args.spark_master, spark_conf, args.spark_remote)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser, with the arguments of the command `argv` runs; every other command is its name and
    help line (enough to list it, or to name a bad choice)."""
    parser = argparse.ArgumentParser(
        prog="hudi-assets",
        description="Apache Hudi table maintenance (timeline, clean, archive) outside the JVM, exact to "
                    "Hudi 0.14/0.15 (table version 6).")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    # The top-level options take no value, so the command is the first argument not an option.
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    for name, line in COMMANDS.items():
        if name == command:
            importlib.import_module(f"hudi_assets.cli.{name}").add_parser(sub)
        else:
            sub.add_parser(name, help=line)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # The reader went away (`| head`): as the Python docs advise, send the rest of the output to
        # devnull so the interpreter's final flush does not fail again, and exit quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except HudiInputError as exc:
        print(f"hudi-assets: error: {exc}", file=sys.stderr)
        return 2
    except HudiAssetsError as exc:
        print(f"hudi-assets: failed: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # last resort: an I/O failure no layer turned into a domain error
        print(f"hudi-assets: failed: {_describe_os_error(exc)}", file=sys.stderr)
        return 1


def _describe_os_error(exc: OSError) -> str:
    """One line naming the file: Python's errors carry it in `filename`, pyarrow's in the text."""
    if exc.filename is not None:
        return f"{os.fsdecode(exc.filename)}: {exc.strerror or exc}"
    return " ".join(str(exc).split())
