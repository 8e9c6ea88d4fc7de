"""Engines loaded at run time: a version of an engine built by `kvlab engines build ADAPTER@VERSION` (where.py: where
the built objects live and what each records; build.py: the recipes turned into shared objects).  kvlab.execution.native
loads them (`load_adapter`); cython_ext/include/kv_plugin.h is the contract's loadable form."""
