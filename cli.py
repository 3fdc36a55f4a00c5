#!/usr/bin/env python
"""Entry point: `python cli.py COMMAND ...`, the same program as `hierattn` and `python -m hierattn`."""

from hierattn.cli import main

if __name__ == "__main__":
    main()
