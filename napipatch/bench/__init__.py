"""The series' latency experiment: experiment.toml -> runs on a target -> tables, plots, the
cover letter."""
