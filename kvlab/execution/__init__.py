"""Layer 3, execution: turning a spec into native runs. The thin layer over kvlab._native,
the runner, background runs, progress (the observer protocol), accounting, database
directories and build facts."""
