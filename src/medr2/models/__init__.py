"""Model adapters behind one contract (docs/models.md)."""
