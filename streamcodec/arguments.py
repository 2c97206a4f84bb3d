"""The public API's counts and sizes checked where they come in: one error naming the argument.

``Encoding(..., cache_bytes='32')`` failed deep inside with ``'<' not supported between
instances of 'str' and 'int'``, and ``jobs=0`` or ``jobs=-1`` ran as one job. Each public entry
that takes a count (``cache_bytes``, ``cache_size``, ``jobs``, ``limit``, ``max_tokens``,
``overlap``) passes it through :func:`whole_number` first: a value that is not a whole number
is a :class:`TypeError`, one below the least it may be a :class:`ValueError`, both naming it.

    >>> whole_number("jobs", 2, least=1)
    2
    >>> whole_number("cache_bytes", "32")
    Traceback (most recent call last):
    TypeError: cache_bytes='32': expected a whole number (an int), not str
    >>> whole_number("jobs", 0, least=1)
    Traceback (most recent call last):
    ValueError: jobs=0: expected a whole number of at least 1
"""

from __future__ import annotations

import operator

__all__ = ["whole_number"]


def whole_number(name: str, value: object, *, least: int = 0) -> int:
    """``value`` as an int (numpy's integers too, not ``True`` or ``2.0``), at least ``least``."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{name}={value!r}: expected a whole number (an int), not {type(value).__name__}"
        ) from None
    if number < least:
        raise ValueError(f"{name}={number}: expected a whole number of at least {least}")
    return number
