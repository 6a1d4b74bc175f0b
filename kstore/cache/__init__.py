"""kstore.cache layer (see DESIGN.md)."""
