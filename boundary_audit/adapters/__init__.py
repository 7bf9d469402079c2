"""adapters stage (see DESIGN.md data flow)."""
