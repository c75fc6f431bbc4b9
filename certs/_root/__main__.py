"""``python -m s4cert``: the s4cert command."""
import sys

from .certs.cli import main

if __name__ == "__main__":
    sys.exit(main())
