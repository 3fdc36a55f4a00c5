"""The `hierattn` command line: `hierattn COMMAND`, `python -m hierattn COMMAND` or `python cli.py COMMAND`.

Each command maps its options onto the library (sqlite-utils' layout): a
module per command (`train`, `evaluate`, `predict`, `explain`, `export`, `serve`), and the
options several of them share defined once in `hierattn.cli.options`. Errors
a user can fix are printed as one line with a non-zero exit code.

Importing this package loads neither Keras nor TensorFlow (`import hierattn`
loads nothing heavy either): a command imports them only once its input is
checked, so bad input is refused in under a second. Process-wide settings
(the TensorFlow allocator, its C++ logging, warnings) are chosen by the
program, in `main`, never on import.
"""

import click

from hierattn import __version__
from hierattn.cli import evaluate, explain, export, predict, serve, train
from hierattn.cli.process import configure_process


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hierattn")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Also show hierattn's log (each n-gram recipe tried), TensorFlow's own log lines and library warnings.",
)
@click.pass_context
def cli(ctx, verbose):
    """hierattn: attention-based document classification you can explain."""
    if ctx.obj and ctx.obj.get("program"):
        configure_process(verbose)


cli.add_command(train.train)
cli.add_command(evaluate.evaluate)
cli.add_command(predict.predict)
cli.add_command(explain.explain)
cli.add_command(export.export)
cli.add_command(serve.serve)


def main(args=None):
    """The `hierattn` program: the CLI with the program's process settings."""
    cli.main(args=args, obj={"program": True}, prog_name="hierattn")


__all__ = ["cli", "configure_process", "main"]
