"""clawmem's engine: a plain library (no textual, no rich) behind one facade, `Engine`."""

from .api import Engine
from .config import Config, ConfigError, load as load_config

__all__ = ["Engine", "Config", "ConfigError", "load_config"]
