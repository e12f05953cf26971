"""Interpreters of primitives: eager evaluation is the core's EvalTrace; here are the recorder and
backward engine (reverse mode), JVP (forward mode), staging (make_jaxpr, jit) and batching (vmap)."""
