"""kstore.registry layer (see DESIGN.md)."""
