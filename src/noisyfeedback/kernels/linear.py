"""Row-level helpers shared by every linear multiclass kernel.

A row is handled as its non-zeros (``idx``, ``val``, ``nnz``) whether X is dense
or CSR, so both paths do the same arithmetic in the same order and cost time
proportional to the non-zeros. Scores are summed over features in increasing
index order, one accumulator per class.
"""

import numpy as np
from numba import config, njit, types
from numba.extending import intrinsic

from ._codes import CSR_CODED, DENSE

#: rounds ahead whose CSR row the simulate loops prefetch (the row order is known in advance)
PREFETCH_AHEAD = 2

if config.DISABLE_JIT:  # plain Python: nothing to prefetch

    def prefetch(arr, i):
        """Hint that ``arr[i]`` will be read soon (compiled: LLVM's prefetch; here: nothing)."""

else:

    @intrinsic
    def prefetch(typingctx, arr, i):
        """Hint that ``arr[i]`` will be read soon: LLVM's ``prefetch`` (read, high locality). Never faults."""
        from llvmlite import ir
        from numba.core import cgutils

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0i8")
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return types.void(arr, i), codegen

if config.DISABLE_JIT:

    def adagrad4(x0, x1, x2, x3, G0, G1, G2, G3, e, inv, lr):
        """AdaGrad on four coordinates (compiled: 4-wide; here the same operations one by one)."""
        out_h = []
        out_s = []
        for x, G in ((x0, G0), (x1, G1), (x2, G2), (x3, G3)):
            g = e * (x * inv)
            h = G + g * g
            out_h.append(h)
            out_s.append((lr * g) / np.sqrt(h if h > 0.0 else 1.0))
        return (*out_h, *out_s)

else:

    @intrinsic
    def adagrad4(typingctx, x0, x1, x2, x3, G0, G1, G2, G3, e, inv, lr):
        """AdaGrad on four coordinates, lane by lane: g = e·(x·inv), h = G + g·g,
        s = (lr·g)/√(h if h > 0 else 1); returns (h0, h1, h2, h3, s0, s1, s2, s3).

        One 4-wide (float64) operation for each step: the same correctly rounded IEEE operations in the
        same order in every lane (no fused multiply-add), so the bits of the scalar formula, at about
        a third fewer instructions and half the sqrt/division time than four scalar copies. The
        loops around it gather x and G and scatter h and s (which LLVM does not vectorise)."""
        from llvmlite import ir
        from numba.core import cgutils

        f8 = types.float64
        sig = types.UniTuple(f8, 8)(*([f8] * 11))

        def codegen(context, builder, signature, args):
            vt = ir.VectorType(ir.DoubleType(), 4)
            i32 = ir.IntType(32)

            def pack(vals):
                vec = ir.Constant(vt, ir.Undefined)
                for k, val in enumerate(vals):
                    vec = builder.insert_element(vec, val, i32(k))
                return vec

            def splat(val):
                return pack([val] * 4)

            xv = pack(args[0:4])
            gv = pack(args[4:8])
            g = builder.fmul(splat(args[8]), builder.fmul(xv, splat(args[9])))
            h = builder.fadd(gv, builder.fmul(g, g))
            one = ir.Constant(vt, [ir.Constant(ir.DoubleType(), 1.0)] * 4)
            zero = ir.Constant(vt, [ir.Constant(ir.DoubleType(), 0.0)] * 4)
            den = builder.select(builder.fcmp_ordered(">", h, zero), h, one)
            sqrt = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vt, [vt]), "llvm.sqrt.v4f64")
            step = builder.fdiv(builder.fmul(splat(args[10]), g), builder.call(sqrt, [den]))
            outs = [builder.extract_element(h, i32(k)) for k in range(4)]
            outs += [builder.extract_element(step, i32(k)) for k in range(4)]
            return context.make_tuple(builder, signature.return_type, outs)

        return sig, codegen


if config.DISABLE_JIT:
    _vector_scores = None
else:

    def _vector_scores(K: int, coded: bool):
        """An intrinsic s = W x for a row given by its non-zeros (coded: x_p = values[codes[p]]) and K classes
        fixed when compiled: `row_scores`'s sums (s_k = 0, then s_k += W[k, j]·x_p over the non-zeros
        in order), kept in 4-wide registers when W is column-major (a feature's K weights adjacent: one
        vector load and one multiply and add per 4 classes, instead of 4 of each), else one scalar per class.

        Each lane does the scalar formula's correctly rounded multiply then add (no fused multiply-add),
        so the bits are `row_scores_any_k`'s. On MNIST (K = 10, about 150 non-zeros a row) the
        scalar loop was bound by its 10 loads per non-zero."""
        from llvmlite import ir
        from numba.core import cgutils

        def codegen(context, builder, signature, args):
            if coded:
                Wty, idxty, codesty, valuesty, nnzty, sty = signature.args
                W, idx, codes, values_, nnz, s = args
            else:
                Wty, idxty, valty, nnzty, sty = signature.args
                W, idx, val, nnz, s = args
            dbl = ir.DoubleType()
            i32 = ir.IntType(32)
            W = context.make_array(Wty)(context, builder, W)
            idx_a = context.make_array(idxty)(context, builder, idx)
            s_a = context.make_array(sty)(context, builder, s)
            if coded:
                codes_a = context.make_array(codesty)(context, builder, codes)
                values_a = context.make_array(valuesty)(context, builder, values_)
            else:
                val_a = context.make_array(valty)(context, builder, val)
            vector = Wty.layout == "F" and Wty.dtype == types.float64
            # lanes: (first class, width); column-major: 4-wide chunks and one narrower for the rest
            lanes = [(k, min(4, K - k)) for k in range(0, K, 4)] if vector else [(k, 1) for k in range(K)]

            def vty(n):
                return dbl if n == 1 else ir.VectorType(dbl, n)

            def splat(x, n):
                if n == 1:
                    return x
                vec = ir.Constant(vty(n), ir.Undefined)
                for i in range(n):
                    vec = builder.insert_element(vec, x, i32(i))
                return vec

            def zero(n):
                return ir.Constant(dbl, 0.0) if n == 1 else ir.Constant(vty(n), [ir.Constant(dbl, 0.0)] * n)

            accs = [cgutils.alloca_once_value(builder, zero(n)) for _, n in lanes]
            count = context.cast(builder, nnz, nnzty, types.intp)
            with cgutils.for_range(builder, count) as loop:
                p = loop.index
                j = builder.load(cgutils.get_item_pointer(context, builder, idxty, idx_a, [p], wraparound=False))
                j = context.cast(builder, j, idxty.dtype, types.intp)
                if coded:
                    c = builder.load(cgutils.get_item_pointer(context, builder, codesty, codes_a, [p],
                                                              wraparound=False))
                    c = context.cast(builder, c, codesty.dtype, types.intp)
                    x = builder.load(cgutils.get_item_pointer(context, builder, valuesty, values_a, [c],
                                                              wraparound=False))
                    x = context.cast(builder, x, valuesty.dtype, types.float64)
                else:
                    x = builder.load(cgutils.get_item_pointer(context, builder, valty, val_a, [p],
                                                              wraparound=False))
                    x = context.cast(builder, x, valty.dtype, types.float64)
                for (k, n), acc in zip(lanes, accs):
                    ptr = cgutils.get_item_pointer(context, builder, Wty, W, [context.get_constant(types.intp, k), j],
                                                   wraparound=False)
                    if n > 1:
                        ptr = builder.bitcast(ptr, vty(n).as_pointer())
                    w = builder.load(ptr, align=8)
                    if not vector:
                        w = context.cast(builder, w, Wty.dtype, types.float64)
                    builder.store(builder.fadd(builder.load(acc), builder.fmul(w, splat(x, n))), acc)
            for (k, n), acc in zip(lanes, accs):
                total = builder.load(acc)
                for i in range(n):
                    lane = total if n == 1 else builder.extract_element(total, i32(i))
                    lane = context.cast(builder, lane, types.float64, sty.dtype)
                    builder.store(lane, cgutils.get_item_pointer(context, builder, sty, s_a,
                                                                 [context.get_constant(types.intp, k + i)],
                                                                 wraparound=False))
            return context.get_dummy_value()

        def typer(*arg_types):
            return types.void(*arg_types)

        if coded:
            def scores(typingctx, W, idx, codes, values, nnz, s):
                return typer(W, idx, codes, values, nnz, s), codegen
        else:
            def scores(typingctx, W, idx, val, nnz, s):
                return typer(W, idx, val, nnz, s), codegen
        scores.__name__ = f"_vector_scores{'_coded' if coded else ''}_{K}"
        return intrinsic(scores)


@njit(cache=True)
def prefetch_csr_row(indptr, indices, data, i):
    """Prefetch every cache line of row i's indices and values."""
    lo = indptr[i]
    hi = indptr[i + 1]
    for p in range(lo, hi, 64 // data.itemsize):
        prefetch(data, p)
    for p in range(lo, hi, 64 // indices.itemsize):
        prefetch(indices, p)


@njit(cache=True)
def fetch_row(i, Xd, indptr, indices, data, sparse, idx, val):
    """Copy row i's non-zeros into idx/val; returns their number.

    ``sparse`` (codes in ``kernels._codes``): DENSE: dense ``Xd``; CSR_FLOAT64 or CSR_OTHER: CSR;
    CSR_CODED: CSR whose ``data`` are codes of the values ``Xd[0]`` (`noisyfeedback._rows.CodedRows`;
    every coded value is non-zero).
    """
    nnz = 0
    if sparse == CSR_CODED:
        for p in range(indptr[i], indptr[i + 1]):
            idx[nnz] = indices[p]
            val[nnz] = Xd[0, np.int64(data[p])]  # (np.int64: typed for float data too; not run then)
            nnz += 1
    elif sparse != DENSE:
        for p in range(indptr[i], indptr[i + 1]):
            v = data[p]
            if v != 0.0:
                idx[nnz] = indices[p]
                val[nnz] = v
                nnz += 1
    else:
        d = Xd.shape[1]
        for j in range(d):  # branch-free compaction: write always, advance on non-zero
            v = Xd[i, j]
            idx[nnz] = j
            val[nnz] = v
            nnz += v != 0.0
    return nnz


#: numbers of classes K for which `row_scores` keeps the K running sums in registers
REGISTER_K = tuple(range(2, 17))

# One kernel per K in REGISTER_K, generated from this template: the same sums in the same order as
# row_scores_any_k, generated too (s_k = 0, then s_k += W[k, j]·v over the non-zeros in order), so the same bits,
# but with K known when compiled the sums stay in registers instead of a store and reload of s[k]
# per non-zero. On MNIST (K = 10, 150 non-zeros a row) the bandit round went from 1.48 to 1.18 µs. Compiled, the
# kernel's body is the intrinsic of `_vector_scores` (the same sums, 4 classes a register when W is
# column-major): SquareCB's round on MNIST went from about 1.03 to 0.75 µs, RCNBF's from 0.9 to 0.65 µs.
# Compiled, `row_scores` calls the 15 intrinsics directly, so one compilation of it covers every K (15
# wrapper functions of their own cost 15 more compilations and cache files for each argument type).
# Two families: values given (``val[p]``) and coded values (``values[codes[p]]``, see _rows.CodedRows).
_FIXED_K_TEMPLATE = """
@njit(cache=True)
def _row_scores{suffix}_{K}(W, idx, {args}, nnz, s):
    {zero}
    for p in range(nnz):
        j = idx[p]
        v = {value}
        {accumulate}
    {store}
"""
_ANY_K_TEMPLATE = """
@njit(cache=True)
def row_scores_any_k{suffix}(W, idx, {args}, nnz, s):
    \"\"\"s = W x for a row given by its non-zeros{what}, any number of classes K (running sums in s).\"\"\"
    K = W.shape[0]
    for k in range(K):
        s[k] = 0.0
    for p in range(nnz):
        j = idx[p]
        v = {value}
        for k in range(K):
            s[k] += W[k, j] * v
"""
_DISPATCH_TEMPLATE = """
@njit(cache=True)
def row_scores{suffix}(W, idx, {args}, nnz, s):
    \"\"\"s = W x for a row given by its non-zeros{what} (sums over the non-zeros in order, one per class).\"\"\"
    K = W.shape[0]
    {branches}
    else:
        row_scores_any_k{suffix}(W, idx, {args}, nnz, s)
"""
_FAMILIES = (("", "val", "val[p]", ""), ("_coded", "codes, values", "values[np.int64(codes[p])]", ", values coded"))


def _generate_row_scores() -> str:
    parts = []
    for suffix, args, value, what in _FAMILIES:
        parts.append(_ANY_K_TEMPLATE.format(suffix=suffix, args=args, value=value, what=what))
        for K in REGISTER_K:
            if _vector_scores is not None:  # compiled: the dispatcher's branches call the intrinsics themselves
                globals()[f"_row_scores{suffix}_{K}"] = _vector_scores(K, suffix == "_coded")
                continue
            parts.append(_FIXED_K_TEMPLATE.format(
                K=K, suffix=suffix, args=args, value=value,
                zero="; ".join(f"a{k} = 0.0" for k in range(K)),
                accumulate="\n        ".join(f"a{k} += W[{k}, j] * v" for k in range(K)),
                store="; ".join(f"s[{k}] = a{k}" for k in range(K))))
        branches = "\n    el".join(f"if K == {K}:\n        _row_scores{suffix}_{K}(W, idx, {args}, nnz, s)"
                                   for K in REGISTER_K)
        parts.append(_DISPATCH_TEMPLATE.format(suffix=suffix, args=args, what=what, branches=branches))
    return "".join(parts)


# compiled under this file's name, so numba caches the generated kernels like the others
exec(compile(_generate_row_scores(), __file__, "exec"), globals())


@njit(cache=True)
def add_sub_rows_coded(W, r_add, coef, r_sub, idx, codes, values, nnz):
    """`add_sub_rows` for a row of coded values (x_j = values[codes[p]])."""
    for p in range(nnz):
        j = idx[p]
        v = values[np.int64(codes[p])]  # np.int64: also typed (never run) for float data
        W[r_add, j] += coef * v
        W[r_sub, j] -= v


@njit(cache=True)
def argmax_first(s):
    """Index of the largest score; the lowest index wins ties."""
    best = 0
    for k in range(1, s.shape[0]):
        if s[k] > s[best]:
            best = k
    return best


@njit(cache=True)
def add_row(W, r, coef, idx, val, nnz):
    """W[r] += coef * x."""
    for p in range(nnz):
        W[r, idx[p]] += coef * val[p]


@njit(cache=True)
def add_sub_rows(W, r_add, coef, r_sub, idx, val, nnz):
    """W[r_add] += coef * x, then W[r_sub] -= x, in one pass over the non-zeros.

    Each entry is touched once per row, so this equals ``add_row`` then ``sub_row`` bit for bit, also
    when r_add == r_sub ((w + coef·v) − v); one pass reads each feature's K weights once instead of twice.
    """
    for p in range(nnz):
        j = idx[p]
        v = val[p]
        W[r_add, j] += coef * v
        W[r_sub, j] -= v


@njit(cache=True)
def epsilon_greedy_draw(yhat, gamma, K, u):
    """Draw from P(r) = (1-γ)·1[r=ŷ] + γ/K by inverse CDF with one uniform u.

    Returns (action, P(action)).
    """
    explore = gamma / K
    cum = 0.0
    a = K - 1
    for r in range(K):
        p = explore + (1.0 - gamma) if r == yhat else explore
        cum += p
        if u < cum:
            a = r
            break
    pa = explore + (1.0 - gamma) if a == yhat else explore
    return a, pa


@njit(cache=True)
def predict_rows(W, Xd, indptr, indices, data, sparse, out):
    n = out.shape[0]
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(n):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)  # noqa: F821 # defined by the exec of generated source above
        out[i] = argmax_first(s)


@njit(cache=True)
def score_rows(W, Xd, indptr, indices, data, sparse, out):
    n = out.shape[0]
    d = W.shape[1]
    idx = np.empty(d, np.int64)
    val = np.empty(d, np.float64)
    s = np.empty(W.shape[0], np.float64)
    for i in range(n):
        nnz = fetch_row(i, Xd, indptr, indices, data, sparse, idx, val)
        row_scores(W, idx, val, nnz, s)  # noqa: F821 # defined by the exec of generated source above
        for k in range(W.shape[0]):
            out[i, k] = s[k]


@njit(cache=True)
def count_row_nonzeros(Xd, counts):
    """counts[i] = number of non-zeros of row i; returns their total."""
    total = 0
    for i in range(Xd.shape[0]):
        c = 0
        for j in range(Xd.shape[1]):
            c += Xd[i, j] != 0.0
        counts[i] = c
        total += c
    return total


@njit(cache=True)
def dense_to_csr(Xd, indptr, indices, data):
    """Fill a CSR structure with the non-zeros of dense Xd, row by row in column order.

    ``indptr`` must already hold the row offsets (cumulative non-zero counts).
    """
    for i in range(Xd.shape[0]):
        p = indptr[i]
        for j in range(Xd.shape[1]):  # branch-free compaction, as fetch_row
            v = Xd[i, j]
            indices[p] = j
            data[p] = v
            p += v != 0.0


@njit(cache=True)
def csr_rows_to_dense(Xd, indptr, indices, data, sparse, rows, out):
    """out[r] = row rows[r] of a CSR X or coded rows (``kernel_view``'s arrays, sparse != DENSE), as a
    dense row."""
    for r in range(rows.shape[0]):
        i = rows[r]
        for j in range(out.shape[1]):
            out[r, j] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            out[r, indices[p]] = Xd[0, np.int64(data[p])] if sparse == CSR_CODED else data[p]


# ------------------------------------------------------------- coded values (see _rows.CodedRows)
# Values are handled as their bit patterns (float64 as uint64, float32 as uint32): two non-zero values
# are equal exactly when their bits are (NaN is rejected before; ±0 are the zeros, which are skipped).
#: slots of the open-addressing table that maps a value to its code (load at most 1/2 for 256 codes)
CODE_SLOTS = 512
_HASH_MULT = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the value's bits
_HASH_SHIFT = np.uint64(64 - 9)  # 2**9 = CODE_SLOTS


@njit(cache=True)
def value_code(b, slot_keys, slot_codes, value_bits, n_values, max_values):
    """Code of the non-zero value with bits ``b``; a value not yet seen gets code ``n_values`` while
    fewer than ``max_values`` codes exist. Returns (code, n_values), or (-1, n_values) when full."""
    key = np.uint64(b)
    slot = np.int64((key * _HASH_MULT) >> _HASH_SHIFT)
    while slot_codes[slot] >= 0:
        if slot_keys[slot] == key:
            return slot_codes[slot], n_values
        slot = (slot + 1) & (CODE_SLOTS - 1)
    if n_values >= max_values:
        return -1, n_values
    slot_keys[slot] = key
    slot_codes[slot] = n_values
    value_bits[n_values] = key
    return n_values, n_values + 1


@njit(cache=True)
def dense_to_coded(bits, abs_mask, indptr, indices, codes, slot_keys, slot_codes, value_bits, max_values):
    """Coded CSR rows from a dense X given as its bits, in one pass: ``indptr`` (n + 1), and the column
    indices and value codes of the non-zeros, written in order into ``indices`` / ``codes`` (sized for
    the non-zeros). Stops early, returning (nnz so far, -1), when the non-zeros would overflow ``codes``,
    or (nnz so far, max_values + 1) on more than ``max_values`` distinct values; else returns
    (nnz, number of values)."""
    n_values = 0
    p = 0
    cap = codes.shape[0]
    indptr[0] = 0
    for i in range(bits.shape[0]):
        for j in range(bits.shape[1]):
            b = bits[i, j]
            if b & abs_mask != 0:
                if p == cap:
                    return p, -1
                code, n_values = value_code(b, slot_keys, slot_codes, value_bits, n_values, max_values)
                if code < 0:
                    return p, max_values + 1
                indices[p] = j
                codes[p] = code
                p += 1
        indptr[i + 1] = p
    return p, n_values


@njit(cache=True)
def code_values(bits, codes, slot_keys, slot_codes, value_bits, max_values):
    """codes[p] = code of the non-zero value with bits[p]; returns the number of values (max_values + 1:
    too many)."""
    n_values = 0
    for p in range(bits.shape[0]):
        code, n_values = value_code(bits[p], slot_keys, slot_codes, value_bits, n_values, max_values)
        if code < 0:
            return max_values + 1
        codes[p] = code
    return n_values
