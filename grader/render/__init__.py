"""A verdict as text and JSON, and in the formats of other platforms."""
