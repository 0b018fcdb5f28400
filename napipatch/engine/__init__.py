"""The check engine: discover the checks, run each on each patch in its own process, through
the result cache."""
