"""Graph models, the store port and its two implementations."""
