"""The series' latency experiment: experiment.toml -> runs on a target -> tables, plots, the
cover letter."""
# How a run is shown (bench.render); here so the CLI checks it without
# importing the renderer.
FORMATS = ("text", "markdown", "json")
