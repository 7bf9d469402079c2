"""tasks stage (see DESIGN.md data flow)."""
