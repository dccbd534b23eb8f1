"""Human review of checked tasks in Label Studio."""
