"""The CI bot: follow public-inbox archives, check each new series, reply on its thread."""
