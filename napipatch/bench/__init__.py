"""The series' latency experiment: experiment.toml -> runs -> tables, plots, cover letter.

experiment (the TOML model), workload (napi_rr, built static), plan (the
matrix as a shell script and its output read back), runner (QEMU guest),
remote (idpf hosts over SSH), record (runs as JSON in the store), render
and plot (showing runs), cover (a run as the cover letter's section).
"""
