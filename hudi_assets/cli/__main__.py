"""`python -m hudi_assets.cli`."""

import sys

from hudi_assets.cli.main import main

sys.exit(main())
