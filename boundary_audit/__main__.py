"""`python -m boundary_audit` runs the command-line interface."""

from __future__ import annotations

import sys

from boundary_audit.cli import main

sys.exit(main())
