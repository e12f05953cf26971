"""Products of fgrad.numpy: dot, matmul (the @ operator), vdot, inner, outer, tensordot,
einsum. All bind the one contraction primitive, fgrad.ops.linalg.dot_general."""
from __future__ import annotations

import numpy as np

from ..core.errors import FgradTypeError, FgradValueError, ShapeError
from ..ops import complex as cx
from ..ops import linalg as la
from ..ops import reduce as red
from ..ops import shape as sh
from ._elementwise import multiply
from ._policy import NUMPY
from ._util import (
    as_value,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    cast,
    ints_arg,
    normalize_axis,
    reject_out,
)

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "einsum"]


def _common(name, *xs, policy=NUMPY):
    """Operands as fgrad values of one dtype (NumPy's promotion, or the policy's); shapes untouched."""
    xs = [as_value(x, name) for x in xs]
    dt = policy.result_dtype(*xs)
    return [cast(x, dt) for x in xs]


def _contract(a, b, a_axes, b_axes):
    return la.dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), ((), ())))


def matmul(a, b, *, policy=NUMPY):
    """Matrix product with NumPy's rules: the last two axes multiply, leading axes broadcast,
    a 1-D operand is a vector (its axis is dropped from the result)."""
    policy.check_matmul_dtypes(a, b)
    a, b = _common("matmul", a, b, policy=policy)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    na, nb = len(sa), len(sb)
    if na == 0 or nb == 0 or sa[-1] != (sb[0] if nb == 1 else sb[-2]):
        raise policy.matmul_error("matmul", sa, sb)
    if na == 1 or nb <= 2:
        # vector @ anything, or anything @ matrix/vector: one plain contraction (a single GEMM)
        return _contract(a, b, (na - 1,), (max(nb - 2, 0),))
    if na == 2:
        # matrix @ stack: (M, K) x (..., K, N) -> (M, ..., N), then move M next to N
        out = _contract(a, b, (1,), (nb - 2,))
        return sh.transpose(out, tuple(range(1, nb - 1)) + (0, nb - 1))
    batch = broadcast_shapes("matmul", sa[:-2], sb[:-2], policy=policy)
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + sb[-2:])
    nd = len(batch)
    return la.dot_general(a, b, (((nd + 1,), (nd,)), (tuple(range(nd)), tuple(range(nd)))))


def dot(a, b, out=None):
    """NumPy's dot: a product for 0-d operands, otherwise the sum over the last axis of `a`
    and the second-to-last axis of `b` (the only axis when `b` is 1-D); out= must be None."""
    reject_out(out, "dot")
    a, b = _common("dot", a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if not sa or not sb:
        return multiply(a, b)
    j = 0 if len(sb) == 1 else len(sb) - 2
    if sa[-1] != sb[j]:
        raise ShapeError(f"dot: shapes {sa} and {sb} not aligned: {sa[-1]} (axis {len(sa) - 1} of the "
                         f"first) != {sb[j]} (axis {j} of the second)")
    return _contract(a, b, (len(sa) - 1,), (j,))


def inner(a, b):
    """Sum over the last axes of `a` and `b` (a product for 0-d operands)."""
    a, b = _common("inner", a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if not sa or not sb:
        return multiply(a, b)
    if sa[-1] != sb[-1]:
        raise ShapeError(f"inner: shapes {sa} and {sb}: the last axes ({sa[-1]} and {sb[-1]}) differ")
    return _contract(a, b, (len(sa) - 1,), (len(sb) - 1,))


def vdot(a, b):
    """Dot product of the flattened operands, the first conjugated (NumPy's vdot)."""
    a, b = _common("vdot", a, b)
    if aval_of(a).dtype.kind == "c":
        a = cx.conj(a)
    a, b = sh.reshape(a, (aval_of(a).size,)), sh.reshape(b, (aval_of(b).size,))
    if aval_of(a).shape != aval_of(b).shape:
        raise ShapeError(f"vdot: operands have {aval_of(a).size} and {aval_of(b).size} elements; "
                         "they must have the same number")
    return _contract(a, b, (0,), (0,))


def outer(a, b):
    """Outer product of the flattened operands: out[i, j] = a[i] * b[j]."""
    a, b = _common("outer", a, b)
    a, b = sh.reshape(a, (aval_of(a).size,)), sh.reshape(b, (aval_of(b).size,))
    return _contract(a, b, (), ())


def _norm_axes(axes, ndim, name):
    if ndim == 0 and axes:
        raise ShapeError(f"{name}: axes {axes} given for a 0-d operand, which has none")
    return [normalize_axis(ax, ndim, name) for ax in axes]


def tensordot(a, b, axes=2):
    """Sum over the given axes: `axes` is N (the last N of a with the first N of b) or a pair
    of axis sequences. Result axes: a's remaining axes, then b's."""
    a, b = _common("tensordot", a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ShapeError(f"tensordot: axes={n} is invalid for shapes {sa} and {sb}")
        a_axes, b_axes = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        if not isinstance(axes, (tuple, list, np.ndarray)) or len(axes) != 2:
            raise FgradTypeError(f"tensordot: axes must be an int or a pair of axis sequences, e.g. "
                            f"((1, 2), (0, 1)), got {type(axes).__name__} {axes!r:.60}")
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(ints_arg(a_axes, "tensordot", "axes"))
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(ints_arg(b_axes, "tensordot", "axes"))
        if len(a_axes) != len(b_axes):
            raise ShapeError(f"tensordot: axes {axes} name {len(a_axes)} axes of a but {len(b_axes)} of b")
        a_axes, b_axes = _norm_axes(a_axes, len(sa), "tensordot"), _norm_axes(b_axes, len(sb), "tensordot")
    for i, j in zip(a_axes, b_axes):
        if sa[i] != sb[j]:
            raise ShapeError(f"tensordot: shape mismatch for sum: axis {i} of {sa} has size {sa[i]} but "
                             f"axis {j} of {sb} has size {sb[j]}")
    return _contract(a, b, a_axes, b_axes)


# --- einsum -------------------------------------------------------------------------------

def _interleaved(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) to subscripts + operands."""
    args = list(args)
    ops, subs = [], []
    while len(args) >= 2:
        ops.append(args.pop(0))
        subs.append(args.pop(0))
    out = args[0] if args else None

    def letters(sub):
        s = ""
        for x in sub:
            if x is Ellipsis:
                s += "..."
            else:
                x = int(x)
                if not 0 <= x < 52:
                    raise FgradValueError(f"einsum: subscript {x} is not in [0, 52)")
                s += chr(ord("A") + x) if x < 26 else chr(ord("a") + x - 26)
        return s

    spec = ",".join(letters(s) for s in subs)
    if out is not None:
        spec += "->" + letters(out)
    return spec, ops


def _parse_einsum(subscripts, shapes):
    subscripts = subscripts.replace(" ", "")
    explicit = "->" in subscripts
    ins, out = subscripts.split("->") if explicit else (subscripts, None)
    specs = ins.split(",")
    if len(specs) != len(shapes):
        raise FgradValueError(f"einsum: subscripts {subscripts!r} name {len(specs)} operand(s) but "
                         f"{len(shapes)} were given")
    for s in specs + ([out] if explicit else []):
        rest = s.replace("...", "")
        if "." in rest or any(not c.isalpha() for c in rest):
            raise FgradValueError(f"einsum: invalid subscript in {subscripts!r}: only letters and '...' "
                             "are allowed")
    ell = []
    for s, shape in zip(specs, shapes):
        n = len(s.replace("...", ""))
        if "..." in s:
            if len(shape) < n:
                raise ShapeError(f"einsum: operand of shape {shape} has fewer axes than subscripts {s!r}")
            ell.append(len(shape) - n)
        else:
            if len(shape) != n:
                raise ShapeError(f"einsum: operand of shape {shape} has {len(shape)} axes but subscripts "
                                 f"{s!r} name {n}")
            ell.append(0)
    n_ell = max(ell, default=0)
    used = set(subscripts)
    ell_labels = [c for c in (chr(0x100 + i) for i in range(n_ell + len(used))) if c not in used][:n_ell]
    in_labels = [list(s.replace("...", "".join(ell_labels[n_ell - k:]))) if "..." in s else list(s)
                 for s, k in zip(specs, ell)]
    if explicit:
        if "..." not in out and any(ell):
            raise ShapeError(f"einsum: {subscripts!r}: the operands have '...' axes but the output "
                             "names none; write '...' in the output (or sum them first)")
        out_labels = list(out.replace("...", "".join(ell_labels)))
        if len(set(out_labels)) != len(out_labels):
            raise FgradValueError(f"einsum: output subscript {out!r} repeats a label")
        all_in = {c for ls in in_labels for c in ls}
        for c in out_labels:
            if c not in all_in:
                raise FgradValueError(f"einsum: output label {c!r} does not appear in the inputs of "
                                 f"{subscripts!r}")
    else:
        counts = {}
        for ls in in_labels:
            for c in ls:
                counts[c] = counts.get(c, 0) + 1
        out_labels = ell_labels + sorted(c for c, n in counts.items() if n == 1 and c not in ell_labels)
    return in_labels, out_labels


def _take_diagonal(x, labels, c):
    """Merge the axes of x labelled `c` (two or more) into one: the diagonal."""
    while labels.count(c) > 1:
        p = labels.index(c)
        q = labels.index(c, p + 1)
        shape = aval_of(x).shape
        if shape[p] != shape[q]:
            raise ShapeError(f"einsum: label {c!r} repeats in one operand over axes of sizes "
                             f"{shape[p]} and {shape[q]}")
        rest = [i for i in range(len(labels)) if i not in (p, q)]
        x = sh.transpose(x, rest + [p, q])
        x = red.reduce_sum(la.diagonal_part(x), (len(labels) - 1,))
        labels = [labels[i] for i in rest] + [c]
    return x, labels


def einsum(*operands, optimize=None):
    """Einstein summation (NumPy's einsum): explicit ('ij,jk->ik') and implicit ('ij,jk')
    output, '...', repeated labels (diagonals and traces), size-1 broadcasting, any number of
    operands (contracted pairwise, in the order numpy.einsum_path chooses), and the
    interleaved form einsum(a, [0, 1], b, [1, 2]). `optimize` is accepted for compatibility."""
    if not operands:
        raise FgradValueError("einsum: no subscripts given")
    if isinstance(operands[0], str):
        subscripts, ops = operands[0], list(operands[1:])
    else:
        subscripts, ops = _interleaved(operands)
    if not ops:
        raise FgradValueError("einsum: no operands given")
    ops = _common("einsum", *ops)
    shapes = [aval_of(x).shape for x in ops]
    in_labels, out_labels = _parse_einsum(subscripts, shapes)

    sizes = {}
    for ls, shape in zip(in_labels, shapes):
        for c, d in zip(ls, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ShapeError(f"einsum: label {c!r} stands for axes of sizes {sizes[c]} and {d} in "
                                 f"{subscripts!r} with operand shapes {', '.join(map(str, shapes))}")

    # per operand: diagonals, size-1 axes that broadcast, and labels nobody else needs
    terms = []
    for x, ls in zip(ops, in_labels):
        for c in dict.fromkeys(ls):
            if ls.count(c) > 1:
                x, ls = _take_diagonal(x, ls, c)
        shape = aval_of(x).shape
        drop = [i for i, c in enumerate(ls) if shape[i] == 1 and sizes[c] != 1]
        if drop:
            x = sh.reshape(x, tuple(d for i, d in enumerate(shape) if i not in drop))
            ls = [c for i, c in enumerate(ls) if i not in drop]
        terms.append((x, ls))

    def needed_elsewhere(k):
        need = set(out_labels)
        for j, (_, ls) in enumerate(terms):
            if j != k:
                need.update(ls)
        return need

    def sum_unneeded(k):
        x, ls = terms[k]
        need = needed_elsewhere(k)
        axes = tuple(i for i, c in enumerate(ls) if c not in need)
        if axes:
            x = red.reduce_sum(x, axes)
            ls = [c for c in ls if c in need]
        terms[k] = (x, ls)

    for k in range(len(terms)):
        sum_unneeded(k)

    for step in _contraction_path(subscripts, ops, len(terms), optimize):
        if len(step) == 1:  # already summed on its own above: only its position changes
            terms.append(terms.pop(step[0]))
            continue
        i, j = step
        (x, lx), (y, ly) = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        need = set(out_labels)
        for _, ls in rest:
            need.update(ls)
        batch = [c for c in lx if c in ly and c in need]
        contract = [c for c in lx if c in ly and c not in need]
        dn = (([lx.index(c) for c in contract], [ly.index(c) for c in contract]),
              ([lx.index(c) for c in batch], [ly.index(c) for c in batch]))
        z = la.dot_general(x, y, dn)
        lz = batch + [c for c in lx if c not in ly] + [c for c in ly if c not in lx]
        terms = rest + [(z, lz)]
        sum_unneeded(len(terms) - 1)

    (x, ls), = terms  # holds every output label: only labels outside the output are summed
    return sh.transpose(x, [ls.index(c) for c in out_labels])


def _contraction_path(subscripts, ops, n, optimize):
    """Steps of one or two operand positions, with numpy's convention: the operands of a step
    are removed and its result (their product, or the one operand) appended at the end."""
    if n <= 1:
        return []
    if n == 2:
        return [(0, 1)]
    dummies = [np.broadcast_to(np.zeros((), aval_of(x).dtype), aval_of(x).shape) for x in ops]
    path = np.einsum_path(subscripts, *dummies, optimize="greedy" if optimize in (None, False, True)
                          else optimize)[0][1:]
    steps = []
    for step in path:
        step = tuple(sorted(step))
        while len(step) > 2:  # more than two at once: contract the first two, then the rest
            steps.append(step[:2])
            n -= 1
            step = tuple(sorted((n - 1,) + tuple(s - 2 for s in step[2:])))
        steps.append(step)  # a single operand (numpy's sum step) just moves to the end
        n -= len(step) - 1
    return steps
