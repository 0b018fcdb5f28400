"""What napipatch knows about kernel sources (C, kernel-doc, net_cachelines, YNL, MAINTAINERS);
never about series or findings."""
