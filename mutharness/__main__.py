"""`python -m mutharness` runs the command line."""

from mutharness.cli import main

main()
