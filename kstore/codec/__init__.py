"""kstore.codec layer (see DESIGN.md)."""
