"""boundary_audit/pipelines."""
