"""Patch mails and series: a mail parsed, its subject read as b4 reads it, mails assembled into
a series."""
