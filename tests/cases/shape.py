"""Cases for shape manipulation (format: see tests/ops/test_primitives.py)."""
import numpy as np

import fgrad.numpy as fnp


def U(*specs):
    """args factory: one uniform array per (low, high, shape)."""
    return lambda rng, dt: tuple(rng.uniform(lo, hi, shape).astype(dt) for lo, hi, shape in specs)


def both(fn):
    """The same lambda for fgrad and NumPy: `fn(module)` builds it."""
    return fn(fnp), fn(np)


def case(name, make, args, options=None):
    f, g = both(make)
    return (name, f, g, args) + ((options,) if options else ())


X = U((-2, 2, (2, 3, 4)))
M = U((-2, 2, (3, 4)))
V = U((-2, 2, (5,)))

CASES = [
    case("reshape", lambda m: lambda x: m.reshape(x, (4, 6)), X, {"f32": True}),
    case("reshape[-1]", lambda m: lambda x: m.reshape(x, (-1, 2)), X),
    case("reshape[method]", lambda m: lambda x: x.reshape(6, 4) * 1.0, X),
    case("ravel", lambda m: lambda x: m.ravel(x), X),
    case("transpose", lambda m: lambda x: m.transpose(x), X, {"f32": True}),
    case("transpose[axes]", lambda m: lambda x: m.transpose(x, (1, 0, 2)), X),
    case("transpose[.T]", lambda m: lambda x: x.T * 1.0, M),
    case("swapaxes", lambda m: lambda x: m.swapaxes(x, 0, 2), X),
    case("moveaxis", lambda m: lambda x: m.moveaxis(x, 0, -1), X),
    case("moveaxis[multiple]", lambda m: lambda x: m.moveaxis(x, (0, 1), (2, 0)), X),
    case("expand_dims", lambda m: lambda x: m.expand_dims(x, 1), M),
    case("expand_dims[tuple]", lambda m: lambda x: m.expand_dims(x, (0, -1)), M),
    case("squeeze", lambda m: lambda x: m.squeeze(x), U((-2, 2, (1, 3, 1, 2)))),
    case("squeeze[axis]", lambda m: lambda x: m.squeeze(x, axis=2), U((-2, 2, (1, 3, 1, 2)))),
    case("broadcast_to", lambda m: lambda x: m.broadcast_to(x, (2, 3, 4)), U((-2, 2, (3, 1)))),
    case("broadcast_arrays", lambda m: lambda x, y: m.broadcast_arrays(x, y)[0] * m.broadcast_arrays(x, y)[1],
         U((-2, 2, (3, 1)), (-2, 2, (4,)))),
    case("atleast_2d", lambda m: lambda x: m.atleast_2d(x), V),
    case("atleast_3d", lambda m: lambda x: m.atleast_3d(x), M),
    case("concatenate", lambda m: lambda x, y: m.concatenate([x, y], axis=1),
         U((-2, 2, (2, 3)), (-2, 2, (2, 4))), {"f32": True}),
    case("concatenate[three]", lambda m: lambda x, y, z: m.concatenate((x, y, z)),
         U((-2, 2, (1, 3)), (-2, 2, (2, 3)), (-2, 2, (3, 3)))),
    case("concatenate[axis_none]", lambda m: lambda x, y: m.concatenate([x, y], axis=None),
         U((-2, 2, (2, 3)), (-2, 2, (4,)))),
    case("concatenate[constant]", lambda m: lambda x: m.concatenate([x, np.ones((2, 2))], axis=-1),
         U((-2, 2, (2, 3)))),
    case("concatenate[promote]", lambda m: lambda x: m.concatenate([x, np.arange(3).reshape(1, 3)]),
         U((-2, 2, (2, 3)))),
    case("stack", lambda m: lambda x, y: m.stack([x, y]), U((-2, 2, (2, 3)), (-2, 2, (2, 3))), {"f32": True}),
    case("stack[axis]", lambda m: lambda x, y: m.stack([x, y], axis=-1), U((-2, 2, (2, 3)), (-2, 2, (2, 3)))),
    case("hstack", lambda m: lambda x, y: m.hstack([x, y]), U((-2, 2, (2, 3)), (-2, 2, (2, 1)))),
    case("hstack[1d]", lambda m: lambda x, y: m.hstack([x, y]), U((-2, 2, (2,)), (-2, 2, (3,)))),
    case("vstack", lambda m: lambda x, y: m.vstack([x, y]), U((-2, 2, (3,)), (-2, 2, (2, 3)))),
    case("dstack", lambda m: lambda x, y: m.dstack([x, y]), U((-2, 2, (2, 3)), (-2, 2, (2, 3)))),
    case("column_stack", lambda m: lambda x, y: m.column_stack([x, y]), U((-2, 2, (3,)), (-2, 2, (3, 2)))),
    case("split", lambda m: lambda x: m.split(x, 2, axis=1)[1], M),
    case("split[indices]", lambda m: lambda x: m.concatenate(m.split(x, [1, 3])[::-1]) * 2.0,
         U((-2, 2, (5, 2)))),
    case("split[all_parts]", lambda m: lambda x: m.split(x, [1, 3, 3, 9], axis=1)[0] * m.split(x, [1, 3], 1)[2]
         .sum(), M),
    case("array_split", lambda m: lambda x: m.array_split(x, 3)[0], U((-2, 2, (7,)))),
    case("hsplit", lambda m: lambda x: m.hsplit(x, 2)[0], M),
    case("vsplit", lambda m: lambda x: m.vsplit(x, [2])[1], M),
    case("tile", lambda m: lambda x: m.tile(x, (2, 1, 3)), U((-2, 2, (3, 2))), {"f32": True}),
    case("tile[int]", lambda m: lambda x: m.tile(x, 2), U((-2, 2, (2, 3)))),
    case("repeat", lambda m: lambda x: m.repeat(x, 2, axis=1), M, {"f32": True}),
    case("repeat[flat]", lambda m: lambda x: m.repeat(x, 3), U((-2, 2, (2, 2)))),
    case("repeat[array]", lambda m: lambda x: m.repeat(x, [1, 0, 2], axis=0), M),
    case("flip", lambda m: lambda x: m.flip(x, axis=1), X, {"f32": True}),
    case("flip[all]", lambda m: lambda x: m.flip(x), X),
    case("fliplr", lambda m: lambda x: m.fliplr(x), M),
    case("flipud", lambda m: lambda x: m.flipud(x), M),
    case("rot90", lambda m: lambda x: m.rot90(x), M),
    case("rot90[k]", lambda m: lambda x: m.rot90(x, 3, axes=(2, 0)), X),
    case("pad", lambda m: lambda x: m.pad(x, ((1, 2), (0, 1))), M, {"f32": True}),
    case("pad[int_width]", lambda m: lambda x: m.pad(x, 1), V),
    case("pad[constant]", lambda m: lambda x: m.pad(x, ((1, 0), (2, 1)),
                                                    constant_values=((1.5, 2.0), (-1.0, 3.0))), M),
    case("pad[edge]", lambda m: lambda x: m.pad(x, ((2, 1), (1, 3)), mode="edge"), M),
    case("pad[reflect]", lambda m: lambda x: m.pad(x, ((2, 1), (3, 2)), mode="reflect"), M),
    case("pad[symmetric]", lambda m: lambda x: m.pad(x, 2, mode="symmetric"), M),
    case("pad[wrap]", lambda m: lambda x: m.pad(x, ((4, 1), (1, 5)), mode="wrap"), M),
    case("roll", lambda m: lambda x: m.roll(x, 2), X, {"f32": True}),
    case("roll[axis]", lambda m: lambda x: m.roll(x, -1, axis=1), X),
    case("roll[axes]", lambda m: lambda x: m.roll(x, (1, 5), axis=(0, 2)), X),
    case("meshgrid", lambda m: lambda x, y: m.meshgrid(x, y)[0] * m.meshgrid(x, y)[1],
         U((-2, 2, (3,)), (-2, 2, (4,)))),
    case("meshgrid[ij]", lambda m: lambda x, y: m.meshgrid(x, y, indexing="ij")[1],
         U((-2, 2, (3,)), (-2, 2, (4,)))),
]

# pad with a traced constant: the constant is differentiated too
CASES.append(("pad[traced_constant]", lambda x, c: fnp.pad(x, 1, constant_values=c),
              lambda x, c: np.pad(x, 1, constant_values=c), U((-2, 2, (2, 3)), (-2, 2, ()))))
