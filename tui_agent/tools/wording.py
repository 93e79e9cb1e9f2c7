"""Counts as a person reads them: ``1 call``, ``2 calls``, ``0 calls``."""

from __future__ import annotations


def counted(count: int | float, noun: str, plural: str | None = None) -> str:
    """``count`` with ``noun`` in the right number (``plural``: for a noun that does not
    just take an ``s``)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
