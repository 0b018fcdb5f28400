"""The kernel tree as git sees it: a series applied with no checkout, the trusted scripts of
its base, greps of it."""
