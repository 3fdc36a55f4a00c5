"""`hierattn export`: options onto `hierattn.runs.export.export_run`."""

import os

import click

from hierattn.cli.options import echo_err, friendly_errors, refuse_existing, run_option


@click.command()
@run_option
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="The bundle to write (it must not exist). Default: the run's own model.onnx, written again.",
)
@friendly_errors
def export(run_dir, output):
    """Export a run's classifier as one bundle (ONNX, with its tokenizer) that runs without TensorFlow.

    Load it with hierattn.runtime.load(PATH) (onnxruntime and NumPy only);
    `hierattn predict` uses a run's model.onnx when it has one. See docs/export.md.
    """
    if output == "-":
        raise click.UsageError("--output names a file: a bundle is binary, not for standard output")
    refuse_existing(output)
    # imported when the command runs: --help, and refusing bad input, come before TensorFlow loads
    from hierattn.runs.export import export_run

    path = export_run(run_dir, output, log=echo_err)
    click.echo(f"exported {path} ({os.path.getsize(path) / 2**20:.1f} MiB)")
