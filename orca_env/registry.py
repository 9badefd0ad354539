"""A name -> record registry with integer codes, for the env's pluggable parts.

Behaviours (:mod:`orca_env.behaviours`) and kinematics models (:mod:`orca_env.kinematics`) are
frozen dataclass records with ``name`` and ``code`` fields; a record's code is its index in
registration order, the integer the per-slot arrays and the numba kernels carry.
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["Registry"]


class Registry(dict):
    """Registered records by name, in code order (a ``dict`` with register and lookup)."""

    def __init__(self, what: str) -> None:
        super().__init__()
        #: What is registered, for messages ("behaviour", "kinematics").
        self.what = what

    def register(self, record: Any, replace: bool = False) -> Any:
        """Register ``record`` under its name with the next code; returns the registered copy.

        Args:
            record: The record (a frozen dataclass with ``name`` and ``code``).
            replace: Replace a record of the same name, keeping its code (re-running a notebook
                cell); False refuses a taken name.

        Raises:
            ValueError: If the name is taken (without ``replace``) or not a lower-case
                identifier.
        """
        name = record.name
        if not name.isidentifier() or name != name.lower():
            raise ValueError(f"{self.what} name must be a lower-case identifier, got {name!r}")
        if name in self and not replace:
            raise ValueError(f"{self.what} {name!r} is already registered (replace=True "
                             f"replaces it)")
        code = self[name].code if name in self else len(self)
        rec = dataclasses.replace(record, code=code)
        self[name] = rec
        return rec

    def lookup(self, name: str, key: str) -> Any:
        """The record ``name``.

        Raises:
            ValueError: Naming ``key`` and the registered names.
        """
        try:
            return self[name]
        except (KeyError, TypeError):
            raise ValueError(f"unknown {key} {name!r}; registered: {list(self)}") from None

    def names(self) -> tuple[str, ...]:
        """Registered names, in code order."""
        return tuple(self)
