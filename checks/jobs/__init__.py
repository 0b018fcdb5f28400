"""Job checks: each reads the result of a job that builds, boots or runs
tools on the applied series (``needs`` build or boot)."""
