"""kstore.server layer (see DESIGN.md)."""
