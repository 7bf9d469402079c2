"""report stage (see DESIGN.md data flow)."""
