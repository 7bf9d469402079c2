"""boundary_audit/report/tasks."""
