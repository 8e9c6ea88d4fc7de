"""Face: the notebook side. `kvlab.run`/`kvlab.start` with progress displays, the run builder
widget, plots, the seeds' experiments (reproduce) and the notebook runner."""
