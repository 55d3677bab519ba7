"""Count a method's calls in a test: how often a read happens, with the real method still run."""

from __future__ import annotations

from typing import Any

import pytest


def record_first_arguments(monkeypatch: pytest.MonkeyPatch, owner: type, name: str) -> list[Any]:
    """Wrap ``owner.name`` so each call appends its first argument (after ``self``) to the returned
    list, then runs the real method; the wrapper goes with the monkeypatch at the test's end."""
    calls: list[Any] = []
    real = getattr(owner, name)

    def recording(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return calls
