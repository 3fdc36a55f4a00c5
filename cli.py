#!/usr/bin/env python
"""Entry point: `python cli.py COMMAND ...` (same as the `hierattn` command)."""

from hierattn.cli import main

if __name__ == "__main__":
    main()
