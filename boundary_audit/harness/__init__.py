"""harness stage (see DESIGN.md data flow)."""
