"""What the generated Avro encoder (`binary`) and decoder (`decoder`) share: the namespace their
code runs in, fresh variable names, the constants it refers to, and compiling it there."""

from __future__ import annotations

from typing import Any


class CodeGenerator:
    """Base of a schema compiler: `env` is the namespace the generated functions run in."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        """A name no other generated variable or function has."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: Any) -> str:
        """The name the generated code uses for `value`."""
        name = self.fresh("_c")
        self.env[name] = value
        return name

    def define(self, sources: list[str], filename: str, entry: str) -> Any:
        """Compile the generated functions into `env`; returns the one named `entry`."""
        exec(compile("\n".join(sources), filename, "exec"), self.env)
        return self.env[entry]
