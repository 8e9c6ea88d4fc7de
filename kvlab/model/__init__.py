"""Layer 1, the model: what a run is, as validated data. RunSpec, the engine-configuration
and workload registries, db_bench's flag table. Imports nothing of kvlab but kvlab.errors."""
