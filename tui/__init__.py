"""clawmem's front ends: the `clawmem` command (cli/) and the terminal app (app.py)."""
