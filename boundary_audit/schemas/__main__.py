"""`python -m boundary_audit.schemas`: regenerate config.schema.json from the registered checks."""

from __future__ import annotations

from boundary_audit.schemas import main

raise SystemExit(main())
