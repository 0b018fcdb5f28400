"""The kernel tree as git sees it: running git (``gitutil``), applying a
series with no checkout (``apply``, ``treebuild``), grepping the base once
(``treegrep``), the trusted scripts of the base commit (``trusted``) and
turning Debian's linux-source into a git tree (``kerneltree``).

The second step of the flow: series -> commits in a tree.
May import: ``mails``, ``errors``.
"""
