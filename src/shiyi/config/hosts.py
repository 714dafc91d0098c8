"""Which host names stay on this machine (for exposure checks and endpoint decisions)."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine (a server on loopback)."""
    return is_loopback(urlsplit(url).hostname or "")
