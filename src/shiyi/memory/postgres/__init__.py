"""The PostgreSQL + pgvector memory backend (``memory.url: postgresql://...``).

Needs the ``postgres`` extra: ``pip install 'shiyi[postgres]'``.
"""

from shiyi.errors import ConfigError


def driver_missing(exc: ImportError) -> ConfigError:
    """The error for a ``postgresql://`` store without the optional driver installed."""
    return ConfigError(
        f"memory.store is a PostgreSQL URL but its driver is missing ({exc}); "
        "install it with `pip install 'shiyi[postgres]'`"
    )
