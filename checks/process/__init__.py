"""netdev's posting rules beyond NIPA's tests: what the list's agent and its
maintainers bounce a series for (report group "netdev process")."""
