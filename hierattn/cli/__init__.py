"""The `hierattn` command line: `hierattn COMMAND`, `python -m hierattn COMMAND` or `python cli.py COMMAND`.

Each command maps its options onto the library (sqlite-utils' layout): a
module per command (`train`, `evaluate`, `predict`, `explain`, `export`, `serve`), gathered in one click group
(`hierattn.cli.group`, here as `cli`), and the options several of them share defined once in
`hierattn.cli.options`. Errors a user can fix are printed as one line with a non-zero exit code.

Importing this package loads neither Keras nor TensorFlow (`import hierattn`
loads nothing heavy either), nor any third-party module: `cli` and
`configure_process` load on first use, and `main` loads the commands itself, so that a Python without hierattn's
dependencies (one outside the project's `.venv`) gets one line saying which module it lacks and how to run the
program instead (`hierattn.cli.dependencies`). A command imports Keras and TensorFlow only once its input is
checked, so bad input is refused in under a second. Process-wide settings
(the TensorFlow allocator, its C++ logging, warnings) are chosen by the
program, in `main`, never on import.
"""

import sys

from hierattn.utils.lazy import lazy_names

__getattr__, __dir__ = lazy_names(__name__, {"cli": "hierattn.cli.group", "configure_process": "hierattn.cli.process"})


def main(args=None):
    """The `hierattn` program: the CLI with the program's process settings.

    A third-party module missing from this Python, whether the commands need it to load (click) or a command
    imports it once it runs (pandas, onnxruntime, TensorFlow, ...), is one `Error:` line naming it and saying how
    to run the program with its dependencies, and exit code 1; a missing module of hierattn's own stays an error
    with its traceback (`hierattn.cli.dependencies.missing_module`).

    Args:
        args: The command line's arguments (default: `sys.argv[1:]`).
    """
    try:
        from hierattn.cli.group import cli

        cli.main(args=args, obj={"program": True}, prog_name="hierattn")
    except ModuleNotFoundError as error:
        from hierattn.cli.dependencies import missing_module, missing_text

        if missing_module(error) is None:
            raise
        print(f"Error: {missing_text(error, sys.argv[1:] if args is None else args)}", file=sys.stderr)
        sys.exit(1)


__all__ = ["cli", "configure_process", "main"]
