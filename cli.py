#!/usr/bin/env python
"""Entry point: `python cli.py COMMAND ...` (same as the `hierattn` command)."""

HIERATTN_PROGRAM = True  # hierattn then loads Keras only when a command needs it (fast errors, quiet TensorFlow)

from hierattn.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
