"""boundary_audit/report/harness."""
