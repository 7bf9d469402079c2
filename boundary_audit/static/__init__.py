"""static stage (see DESIGN.md data flow)."""
