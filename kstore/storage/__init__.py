"""kstore.storage layer (see DESIGN.md)."""
