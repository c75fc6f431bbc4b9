"""``python -m s4cert``: the s4cert command."""
import sys

from .certs.cli import main

sys.exit(main())
