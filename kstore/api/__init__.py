"""The object model: names, the Scheme, the built-in kinds, validation."""
