"""ray.util of the stand-in (tests only; not Ray)."""

from . import placement_group, scheduling_strategies  # noqa: F401


def get_node_ip_address():
    return '127.0.0.1'
