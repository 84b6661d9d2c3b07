"""`python -m generator` is the `plate` command."""
import sys

from .cli import main

sys.exit(main())
