"""Model adapters behind one contract (DESIGN §7)."""
