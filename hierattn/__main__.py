"""`python -m hierattn COMMAND ...`: the `hierattn` program."""

from hierattn.cli import main

if __name__ == "__main__":
    main()
