"""The netdev CI's tools builds: tools/net/ynl (``ynl``) and the selftests
(``build_tools``), at a patch and at its parent, new stderr lines only."""
