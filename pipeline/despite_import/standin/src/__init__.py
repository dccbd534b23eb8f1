"""Stand-in for DESPITE's `src` package, put first on an imported task's sys.path."""
