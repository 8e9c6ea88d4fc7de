"""Layer 4, services: what both faces (kvlab/lab, the notebook face, and kvlab/cli, the command) use and neither
owns: today the progress renderers for a terminal or a log (`progress`)."""
