"""The `hierattn` command group: its global options and its commands, a module each (`hierattn.cli`'s layout)."""

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
