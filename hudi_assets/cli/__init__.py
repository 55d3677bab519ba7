"""The `hudi-assets` command line: `main.py` builds the parser, each other module is one subcommand."""

from hudi_assets.cli.main import main

__all__ = ["main"]
