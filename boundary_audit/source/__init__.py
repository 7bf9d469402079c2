"""source stage (see DESIGN.md data flow)."""
