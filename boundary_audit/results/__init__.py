"""boundary_audit/results."""
