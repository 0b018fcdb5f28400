"""Findings and reports: what a run found and its verdict, rendered as text, markdown, terse or
JSON."""
