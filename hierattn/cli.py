"""The `hierattn` command line (also run as `python cli.py`).

The CLI only parses options and calls the library.
"""

import click

from hierattn import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hierattn")
def main():
    """hierattn: attention-based document classification you can explain."""
