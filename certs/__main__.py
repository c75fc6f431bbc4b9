"""``python -m s4cert.certs``: the s4cert command."""
import sys

from .cli import main

sys.exit(main())
