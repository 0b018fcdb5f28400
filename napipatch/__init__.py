"""napipatch: check, build and boot netdev patch series before sending them."""

__version__ = "0.1.0"
