"""The series store (series/NAME/vN/ as git format-patch writes it) and the ways series come in
and out."""
