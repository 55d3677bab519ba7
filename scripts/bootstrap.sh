# Sourced by the other scripts: install uv (from PyPI) and the locked environment, all extras, into .venv.
# Needs only Python 3.11 on PATH; every later run is a no-op check (<1 s).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export UV_COMPILE_BYTECODE=1 UV_PYTHON_DOWNLOADS=never UV_PYTHON=python3.11
UV_VERSION="0.13.9"
if command -v uv >/dev/null 2>&1; then
  UV=uv
else
  if [ ! -x .tools/uv/bin/uv ]; then
    echo "bootstrap: installing uv $UV_VERSION into .tools/uv" >&2
    python3.11 -m venv .tools/uv
    .tools/uv/bin/pip install --quiet "uv==$UV_VERSION"
  fi
  UV="$ROOT/.tools/uv/bin/uv"
fi
"$UV" sync --frozen --all-extras --quiet  # every extra: the demo and the tests use them all
export PATH="$ROOT/.venv/bin:$PATH"
