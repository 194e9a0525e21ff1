"""Built-in themes (TOML files), shipped with the package."""
