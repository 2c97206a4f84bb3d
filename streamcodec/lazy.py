"""Names a package hands out from its modules, imported when first asked for (PEP 562).

A package's ``__getattr__`` calls :func:`imported`, so importing the package stays cheap and
``from package import name`` still works as if the name had been imported eagerly::

    _HOMES = {"read_gpt2": "gpt2"}

    def __getattr__(name: str) -> Any:
        return imported(globals(), __name__, _HOMES, name)
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: the top package imports this module at its start
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def imported(namespace: dict[str, Any], package: str, homes: Mapping[str, str], name: str) -> Any:
    """``name`` from its module ``package.homes[name]``, kept in the package's ``namespace``
    (the next lookup does not come here); ``AttributeError`` for a name with no home."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{package}.{home}"), name)
    namespace[name] = value
    return value
