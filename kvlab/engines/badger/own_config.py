"""Badger's own account of its configuration: the block cache and memtable size it was opened with, as kvlab's Go
shim reports them (the adapter's stats call), under the same names as Pebble's (one shim: ../_goshim)."""
from ..pebble.own_config import own_config

__all__ = ["own_config"]
