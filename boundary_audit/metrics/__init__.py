"""metrics stage (see DESIGN.md data flow)."""
