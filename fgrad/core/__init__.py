"""fgrad's core: abstract values, the IR, primitives, the trace context and errors.
The names users reach for when writing or inspecting primitives are re-exported here."""
from .avals import ShapedArray  # noqa: F401
from .errors import (ConcretizationError, DifferentiationError, FgradError, ShapeError,  # noqa: F401
                     TracerArrayConversionError, TracerBoolConversionError, UnexpectedTracerError)
from .ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, eval_jaxpr  # noqa: F401
from .primitive import Primitive  # noqa: F401
