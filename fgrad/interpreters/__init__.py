"""Interpreters of primitives: eager evaluation is the core's EvalTrace; here are the recorder and
backward engine (reverse mode), JVP (forward mode), staging (make_jaxpr, jit) and batching (vmap);
`compile/` is jit's compiler (a staged jaxpr to one Python function with fused Numba kernels)."""
