"""The run pipeline: a spec compiled into phases (`phases`), run trial by trial (`runner`; `trial`: the engine
opened once per trial, one phase at a time), each phase watched (`sampler`, `events`) and turned into a result
(`record`, with `intervals`, `mixrecord`, `phaseamp`); loads, the mix plan, CPU pinning and key indices."""
