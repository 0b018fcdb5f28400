"""The netdev CI's tools builds: tools/net/ynl (``ynl``), the selftests
(``build_tools``) and the DT bindings (``dt_binding_check``), at a patch and
at its parent, new lines only."""
