"""What napipatch knows about kernel sources: C declarations and calls
(``cparse``, ``cparse_calls``), kernel-doc (``kerneldoc``), the
net_cachelines rst tables (``netcachelines``), YNL specs and generated code
(``ynlspec``, ``ynlbatch``, which runs in the trusted copy's interpreter),
and get_maintainer.pl (``maintainers``).

Used by the checks; never knows about series or findings.
May import: ``tree``, ``errors``.
"""
