"""clawmem's front ends: the `clawmem` command (cli.py) and the terminal app (app.py)."""
