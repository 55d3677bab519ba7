#!/usr/bin/env bash
# Run the test suite (sets up .venv from uv.lock first). Extra arguments go to pytest.
source "$(dirname "$0")/bootstrap.sh"
exec pytest "$@"
