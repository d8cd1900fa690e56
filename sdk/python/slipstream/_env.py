"""Reads the variables Slipstream gives every instance; tests pass a dict of their own."""

from pathlib import Path
from typing import Mapping, Optional


class Environment:
    def __init__(self, variables: Mapping[str, str]):
        self._env = dict(variables)

    def get(self, name: str) -> Optional[str]:
        return self._env.get(name)

    def path(self, name: str) -> Optional[Path]:
        value = self._env.get(name)
        return Path(value) if value else None

    def integer(self, name: str, otherwise: int) -> int:
        value = self._env.get(name)
        if value is None:
            return otherwise
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError(f"{name} is not a number: {value}") from None
