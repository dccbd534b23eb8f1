"""Prefect flows and deployments (thin: they call the library)."""
