"""Compiled parsing of Vowpal Wabbit text (``--cb`` one example a line, ``--cb_adf`` blocks of lines)
straight from bytes into the catalogue learners' hashed arrays.

The grammar and the hashing are those of `noisyfeedback.datasets.vw_adf` and
`noisyfeedback.hashing` (a feature's hash is VW's hashstring: all ASCII digits give
``int(name) + seed`` mod 2^32, anything else MurmurHash3_x86_32 of its UTF-8 bytes seeded by the
namespace's hash; ``name:text`` is the feature ``name + text`` with value 1; features repeated
within a namespace of a line are summed at their first place; namespaces are listed in the order of
their first appearance on the line). Numbers follow ``[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?``;
those with at most 15 significant digits and a decimal exponent within ±22 are converted exactly
(Clinger's fast path: one exact product or quotient of doubles is correctly rounded), the others by
Python's ``float`` (the same bits as the Python readers either way).

Two passes over a buffer: `vw_scan` finds the complete examples (and refuses over-long lines
and examples before anything is allocated for them) and counts them, their lines and tokens;
`vw_parse` fills arrays sized by those counts. Errors come back as a code and the byte
offsets of the offending line and token; the Python caller words them.
"""

import numpy as np
from numba import njit, objmode
from numba.extending import register_jitable

MASK32 = 0xFFFFFFFF

# error codes (see ``noisyfeedback.datasets.vw_stream._MESSAGES``)
E_LONG_LINE = 1
E_LONG_EXAMPLE = 2
E_NO_BAR = 3
E_SHARED_POS = 4
E_SHARED_COST = 5
E_CCB_LINE = 6
E_LABELS = 7
E_TWO_LABELS = 8
E_LABEL_FORM = 9
E_LABEL_ACTION = 10
E_LABEL_NUMBERS = 11
E_COST = 12
E_PROB = 13
E_NS_EMPTY = 14
E_NS_SCALE = 15
E_ANON = 16
E_VALUE_INF = 17
E_VALUE_BAD = 18
E_DUP_STRING = 19
E_SHARED_ONLY = 20
E_MULTILINE_IN_CB = 21
E_CB_ACTION = 22
E_ACTION_BEYOND = 23
E_TWO_CHOSEN = 24
E_TOO_MANY_NS = 25

_POW10 = np.array([10.0 ** i for i in range(23)])


@njit(cache=True)
def _ws(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & MASK32


@njit(cache=True)
def _mix_k(k):
    k = (k * 0xCC9E2D51) & MASK32
    k = _rotl(k, 15)
    return (k * 0x1B873593) & MASK32


@njit(cache=True)
def murmur3_32(buf, s, e, seed):
    """MurmurHash3_x86_32 of ``buf[s:e]`` with ``seed`` (unsigned, as an int)."""
    h = seed & MASK32
    n = e - s
    nb = n // 4
    for b in range(nb):
        p = s + 4 * b
        k = int(buf[p]) | (int(buf[p + 1]) << 8) | (int(buf[p + 2]) << 16) | (int(buf[p + 3]) << 24)
        h ^= _mix_k(k)
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & MASK32
    t = s + 4 * nb
    r = n & 3
    if r:
        k = 0
        if r == 3:
            k ^= int(buf[t + 2]) << 16
        if r >= 2:
            k ^= int(buf[t + 1]) << 8
        k ^= int(buf[t])
        h ^= _mix_k(k)
    h ^= n & MASK32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    h ^= h >> 16
    return h


@njit(cache=True)
def hash_bytes(buf, s, e, seed):
    """VW's hashstring of ``buf[s:e]`` (no spaces inside): all ASCII digits -> int + seed mod 2^32,
    else MurmurHash3 (``noisyfeedback.hashing.hash_string``)."""
    acc = 0
    for p in range(s, e):
        c = buf[p]
        if c < 48 or c > 57:
            return murmur3_32(buf, s, e, seed)
        acc = (acc * 10 + (int(c) - 48)) & MASK32
    return (acc + seed) & MASK32


@njit(cache=True)
def parse_number(buf, s, e):
    """(1, value) if ``buf[s:e]`` is a number of the grammar in the module doc, else (0, 0.0)."""
    p = s
    neg = False
    if p < e and (buf[p] == 43 or buf[p] == 45):
        neg = buf[p] == 45
        p += 1
    mant = 0
    sig = 0  # significant digits kept in mant
    drop = 0  # integer digits past the 19th (mant would overflow)
    frac = 0
    nd = 0
    while p < e and 48 <= buf[p] <= 57:
        d = int(buf[p]) - 48
        if sig > 0 or d != 0:
            if sig < 18:
                mant = mant * 10 + d
                sig += 1
            else:
                sig += 1
                drop += 1
        nd += 1
        p += 1
    if p < e and buf[p] == 46:
        p += 1
        while p < e and 48 <= buf[p] <= 57:
            d = int(buf[p]) - 48
            if sig > 0 or d != 0:
                if sig < 18:
                    mant = mant * 10 + d
                    sig += 1
                    frac += 1
                else:
                    sig += 1
            else:
                frac += 1
            nd += 1
            p += 1
    if nd == 0:
        return 0, 0.0
    exp = 0
    if p < e and (buf[p] == 101 or buf[p] == 69):
        p += 1
        eneg = False
        if p < e and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        ne = 0
        while p < e and 48 <= buf[p] <= 57:
            if exp < 100000:
                exp = exp * 10 + (int(buf[p]) - 48)
            ne += 1
            p += 1
        if ne == 0:
            return 0, 0.0
        if eneg:
            exp = -exp
    if p != e:
        return 0, 0.0
    e10 = exp - frac + drop
    if sig <= 15 and -22 <= e10 <= 22:
        v = float(mant)
        if e10 >= 0:
            v = v * _POW10[e10]
        else:
            v = v / _POW10[-e10]
        return 1, -v if neg else v
    if mant == 0:
        return 1, -0.0 if neg else 0.0
    v = 0.0
    seg = buf[s:e]
    with objmode(v="float64"):
        v = float(bytes(seg))
    return 1, v


@njit(cache=True, nogil=True)
def vw_scan(buf, pos, end, final, adf, max_rounds, max_line, max_example, out):
    """Find the complete examples of ``buf[pos:end]`` (at most ``max_rounds``); ``final``: the buffer
    ends the file. out[:] = stop (the byte after the last complete example), examples, non-blank
    lines, tokens, the most tokens on a line, error code, error offset (0: none)."""
    i = pos
    n_ex = 0
    n_lines = 0
    n_tok = 0
    max_tok = 0
    stop = pos
    lines_in = 0
    tok_in = 0
    ex_start = pos
    err = 0
    err_pos = 0
    while i < end and n_ex < max_rounds:
        j = i
        while j < end and buf[j] != 10:
            j += 1
        if j - i > max_line:
            err = E_LONG_LINE
            err_pos = i
            break
        if j == end and not final:
            if adf and lines_in > 0 and j - ex_start > max_example:
                err = E_LONG_EXAMPLE
                err_pos = ex_start
            break
        toks = 0
        inword = False
        for k in range(i, j):
            w = _ws(buf[k])
            if not w and not inword:
                toks += 1
            inword = not w
        nxt = j + 1 if j < end else j
        if toks == 0:
            if lines_in > 0:  # adf: the blank line ends the example
                n_ex += 1
                n_lines += lines_in
                n_tok += tok_in
                lines_in = 0
                tok_in = 0
            stop = nxt
        else:
            if lines_in == 0:
                ex_start = i
            if toks > max_tok:
                max_tok = toks
            if adf:
                lines_in += 1
                tok_in += toks
                if nxt - ex_start > max_example:
                    err = E_LONG_EXAMPLE
                    err_pos = ex_start
                    break
            else:
                n_ex += 1
                n_lines += 1
                n_tok += toks
                stop = nxt
        i = nxt
    if err == 0 and final and i >= end and lines_in > 0 and n_ex < max_rounds:
        n_ex += 1
        n_lines += lines_in
        n_tok += tok_in
        stop = end
    out[0] = stop
    out[1] = n_ex
    out[2] = n_lines
    out[3] = n_tok
    out[4] = max_tok
    out[5] = err
    out[6] = err_pos


@register_jitable  # compiled into its callers: as a kernel of its own, each error code (a literal) compiled it anew
def _fail(err, code, line, s, e):
    err[0] = code
    err[1] = line
    err[2] = s
    err[3] = e
    return -1


#: the namespace table's size (open addressing; more than twice the most namespaces accepted)
NS_TABLE = 4096
_NS_EMPTY = -2


@njit(cache=True)
def _ns_id(ns_tab, ns_new, ns_cache, key, s, e):
    """The id of the namespace with ``key`` (its hash; -1 the default namespace), registering a new one
    (its name's byte span, ``ns_new[id] = (s, e)``; (-1, -1): the default); -1 when ``ns_new`` is full.
    ``ns_tab`` (NS_TABLE, 2): (key, id) by open addressing, ``ns_tab[0, 1]`` ... the count in ns_new_count."""
    for c in range(ns_cache.shape[0]):  # the few namespaces of a log, before the table
        if ns_cache[c, 1] < 0:
            break
        if ns_cache[c, 0] == key:
            return ns_cache[c, 1]
    size = ns_tab.shape[0] - 1  # the last row holds the count
    slot = ((key & MASK32) * 2654435761) & (size - 1)
    while ns_tab[slot, 0] != _NS_EMPTY and ns_tab[slot, 0] != key:
        slot = (slot + 1) & (size - 1)
    if ns_tab[slot, 0] == key:
        got = ns_tab[slot, 1]
    else:
        got = ns_tab[size, 1]
        if got >= ns_new.shape[0]:
            return -1
        ns_tab[slot, 0] = key
        ns_tab[slot, 1] = got
        ns_tab[size, 1] = got + 1
        ns_new[got, 0] = s
        ns_new[got, 1] = e
    for c in range(ns_cache.shape[0]):
        if ns_cache[c, 1] < 0:
            ns_cache[c, 0] = key
            ns_cache[c, 1] = got
            break
    return got


def new_ns_table() -> np.ndarray:
    """An empty namespace table for `vw_parse` (NS_TABLE rows and a row holding the count)."""
    tab = np.full((NS_TABLE + 1, 2), _NS_EMPTY, np.int64)
    tab[NS_TABLE, 1] = 0
    return tab


def ns_count(tab: np.ndarray) -> int:
    return int(tab[NS_TABLE, 1])


def ns_register(tab: np.ndarray, ns_new: np.ndarray, key: int) -> int:
    """Register a namespace from Python (the cb actions' namespace); its id."""
    return int(_ns_id(tab, ns_new, np.full((1, 2), -1, np.int64), key, -1, -1))


@njit(cache=True)
def _features(buf, fs, fe, line, ns_tab, ns_new, ns_cache, t_ns, t_key, t_hash, t_val, t_str, t_alive, t_rank, scratch,
              o_hash, o_val, o_ns, o, err):
    """Parse the ``|ns f[:v] ...`` part ``buf[fs:fe]`` (``buf[fs]`` is '|') of one line into o_*[o:];
    returns the new o, or -1 with ``err`` set."""
    n = 0
    p = fs
    while p < fe:  # p at a '|'
        q = p + 1
        pe = q
        while pe < fe and buf[pe] != 124:
            pe += 1
        if q == pe or buf[q] == 32 or buf[q] == 9:
            key = -1
            nsid = _ns_id(ns_tab, ns_new, ns_cache, key, -1, -1)
            if nsid < 0:
                return _fail(err, E_TOO_MANY_NS, line, 0, 0)
            hs = 0
            scale = 1.0
            k = q
        else:
            k = q
            while k < pe and _ws(buf[k]):
                k += 1
            ts = k
            while k < pe and not _ws(buf[k]):
                k += 1
            c = ts
            while c < k and buf[c] != 58:
                c += 1
            if c == ts:
                return _fail(err, E_NS_EMPTY, line, ts, k)
            scale = 1.0
            if c < k:
                ok, scale = parse_number(buf, c + 1, k)
                if ok == 0 or not np.isfinite(scale):
                    return _fail(err, E_NS_SCALE, line, ts, k)
            hs = hash_bytes(buf, ts, c, 0)
            key = hs
            nsid = _ns_id(ns_tab, ns_new, ns_cache, key, ts, c)
            if nsid < 0:
                return _fail(err, E_TOO_MANY_NS, line, 0, 0)
        while k < pe:
            while k < pe and _ws(buf[k]):
                k += 1
            if k >= pe:
                break
            ts = k
            while k < pe and not _ws(buf[k]):
                k += 1
            c = ts
            while c < k and buf[c] != 58:
                c += 1
            if c == ts:
                return _fail(err, E_ANON, line, ts, k)
            h = hash_bytes(buf, ts, c, hs)
            isstr = False
            hv = h
            if c == k:
                v = scale
            else:
                ok, v = parse_number(buf, c + 1, k)
                if ok:
                    if not np.isfinite(v):
                        return _fail(err, E_VALUE_BAD, line, ts, k)
                    v = v * scale
                    if not np.isfinite(v):
                        return _fail(err, E_VALUE_INF, line, ts, k)
                else:
                    f = buf[c + 1] if c + 1 < k else 0
                    amb = c + 1 == k or f == 43 or f == 45 or f == 46 or 48 <= f <= 57
                    if not amb and k - c - 1 >= 3:
                        a0, a1, a2 = buf[c + 1] | 32, buf[c + 2] | 32, buf[c + 3] | 32
                        amb = (a0 == 105 and a1 == 110 and a2 == 102) or (a0 == 110 and a1 == 97 and a2 == 110)
                    if amb:
                        return _fail(err, E_VALUE_BAD, line, ts, k)
                    isstr = True
                    v = 1.0
                    m = 0
                    for b in range(ts, c):
                        scratch[m] = buf[b]
                        m += 1
                    for b in range(c + 1, k):
                        scratch[m] = buf[b]
                        m += 1
                    hv = hash_bytes(scratch, 0, m, hs)
            t_ns[n] = nsid
            t_key[n] = h
            t_hash[n] = hv
            t_val[n] = v
            t_str[n] = isstr
            t_alive[n] = True
            n += 1
        p = pe
    if n == 0:
        return o
    # sum repeated features of a namespace at their first place; namespaces in order of first appearance
    if n <= 48:
        for i in range(1, n):
            for j in range(i):
                if t_alive[j] and t_ns[j] == t_ns[i] and t_key[j] == t_key[i]:
                    if t_str[i] or t_str[j]:
                        return _fail(err, E_DUP_STRING, line, 0, 0)
                    t_val[j] = t_val[j] + t_val[i]
                    t_alive[i] = False
                    break
        done = 0
        while done < n:
            # the next namespace in order of appearance: that of the first entry not yet emitted
            cur = -1
            for i in range(n):
                if t_rank[i] == 0:
                    cur = t_ns[i]
                    break
            if cur < 0:
                break
            for i in range(n):
                if t_ns[i] == cur and t_rank[i] == 0:
                    t_rank[i] = 1
                    done += 1
                    if t_alive[i]:
                        o_hash[o] = t_hash[i]
                        o_val[o] = t_val[i]
                        o_ns[o] = t_ns[i]
                        o += 1
        for i in range(n):
            t_rank[i] = 0
        return o
    comb = t_ns[:n] * (MASK32 + 1) + t_key[:n]
    order = np.argsort(comb, kind="mergesort")
    i = 0
    while i < n:
        j = i + 1
        a = order[i]
        while j < n and comb[order[j]] == comb[a]:
            b = order[j]
            if t_str[a] or t_str[b]:
                return _fail(err, E_DUP_STRING, line, 0, 0)
            t_val[a] = t_val[a] + t_val[b]
            t_alive[b] = False
            j += 1
        i = j
    # rank of each entry's namespace = position of the namespace's first appearance
    firstpos = np.full(ns_new.shape[0], -1, np.int64)
    for i in range(n):
        if firstpos[t_ns[i]] < 0:
            firstpos[t_ns[i]] = i
    rk = np.empty(n, np.int64)
    for i in range(n):
        rk[i] = firstpos[t_ns[i]] * n + i
    order = np.argsort(rk, kind="mergesort")
    for i in order:
        if t_alive[i]:
            o_hash[o] = t_hash[i]
            o_val[o] = t_val[i]
            o_ns[o] = t_ns[i]
            o += 1
    return o


@njit(cache=True)
def _line_end(buf, i, stop):
    j = i
    while j < stop and buf[j] != 10:
        j += 1
    e = j
    while e > i and (buf[e - 1] == 13 or buf[e - 1] == 10):
        e -= 1
    return j, e


@njit(cache=True)
def _split(buf, ls, le, words):
    """VW's split of a line: (number of label words, their spans in ``words``, start of the features
    or -1). The label part is before the first '|' (after a tab if any), words split on spaces; the
    last word is a tag when quoted or touching the '|'."""
    bar = ls
    while bar < le and buf[bar] != 124:
        bar += 1
    he = bar
    fs = bar if bar < le else -1
    hs = ls
    for k in range(ls, he):
        if buf[k] == 9:
            hs = k + 1
            break
    nw = 0
    k = hs
    while k < he:
        while k < he and buf[k] == 32:
            k += 1
        if k >= he:
            break
        s = k
        while k < he and buf[k] != 32:
            k += 1
        if nw < words.shape[0]:
            words[nw, 0] = s
            words[nw, 1] = k
        nw += 1
    if nw > 0 and (buf[words[min(nw, words.shape[0]) - 1, 0]] == 39 or he == hs or buf[he - 1] != 32):
        nw -= 1
    return nw, fs


@njit(cache=True)
def _is_word(buf, s, e, text):
    if e - s != len(text):
        return False
    for k in range(e - s):
        if buf[s + k] != text[k]:
            return False
    return True


_SHARED = np.frombuffer(b"shared", np.uint8)
_CCB = np.frombuffer(b"ccb", np.uint8)


@njit(cache=True)
def _colons(buf, s, e, cpos):
    n = 0
    for k in range(s, e):
        if buf[k] == 58:
            if n < 3:
                cpos[n] = k
            n += 1
    return n


@njit(cache=True)
def _digits(buf, s, e):
    for k in range(s, e):
        if buf[k] < 48 or buf[k] > 57:
            return False
    return True


@njit(cache=True)
def _cost_prob(buf, s, e, c1, c2, line, err, res):
    """cost (between c1 and c2) and probability (after c2) of a label word; res[0], res[1]."""
    ok1, cost = parse_number(buf, c1 + 1, c2)
    ok2, prob = parse_number(buf, c2 + 1, e)
    if ok1 == 0 or ok2 == 0:
        return _fail(err, E_LABEL_NUMBERS, line, s, e)
    if not np.isfinite(cost):
        return _fail(err, E_COST, line, s, e)
    if not (0.0 < prob <= 1.0):
        return _fail(err, E_PROB, line, s, e)
    res[0] = cost
    res[1] = prob
    return 0


@njit(cache=True, nogil=True)
def vw_parse(buf, pos, stop, adf, k_check, max_tok, ns_tab, ns_new,
             c_indptr, c_hash, c_val, c_ns, i_indptr, i_hash, i_val, i_ns, offsets,
             lab_action, lab_cost, lab_prob, lab_line, err, counts):
    """Parse the complete examples of ``buf[pos:stop]`` (found by `vw_scan`) into the arrays:
    shared rows (c_*), action rows (i_*; none for cb), offsets (actions per example, adf), labels
    (action index 0-based or -1, cost, probability) and the byte offset of each example's first line.
    cb: every action number is checked against ``k_check``; counts[2] = the largest action seen.
    counts[0], counts[1] = shared and action feature entries written. Returns examples parsed, or -1."""
    t_ns = np.empty(max_tok, np.int64)
    t_key = np.empty(max_tok, np.int64)
    t_hash = np.empty(max_tok, np.int64)
    t_val = np.empty(max_tok)
    t_str = np.zeros(max_tok, np.bool_)
    t_alive = np.zeros(max_tok, np.bool_)
    t_rank = np.zeros(max_tok, np.int64)
    scratch = np.empty(max(stop - pos, 1), np.uint8)
    words = np.empty((max(max_tok, 1), 2), np.int64)
    cpos = np.empty(3, np.int64)
    res = np.empty(2)
    ns_cache = np.full((16, 2), -1, np.int64)
    oc = 0
    oi = 0
    ex = 0
    row = 0  # action rows written
    c_indptr[0] = 0
    i_indptr[0] = 0
    offsets[0] = 0
    top = counts[2]
    i = pos
    in_ex = False
    pos_in = 0
    while i < stop:
        j, le = _line_end(buf, i, stop)
        nxt = j + 1
        blank = True
        for k in range(i, le):
            if not _ws(buf[k]):
                blank = False
                break
        if blank:
            if in_ex:  # end of an adf example
                if row == offsets[ex]:
                    return _fail(err, E_SHARED_ONLY, lab_line[ex], 0, 0)
                ex += 1
                offsets[ex] = row
                c_indptr[ex] = oc
                in_ex = False
            i = nxt
            continue
        nw, fs = _split(buf, i, le, words)
        fe = le
        if adf:
            if not in_ex:
                in_ex = True
                pos_in = 0
                lab_line[ex] = i
                lab_action[ex] = -1
                lab_cost[ex] = 0.0
                lab_prob[ex] = 0.0
            if nw >= 1 and _is_word(buf, words[0, 0], words[0, 1], _SHARED):
                if pos_in > 0:
                    return _fail(err, E_SHARED_POS, i, 0, 0)
                if nw > 1:
                    return _fail(err, E_SHARED_COST, i, 0, 0)
                if fs >= 0:
                    oc = _features(buf, fs, fe, i, ns_tab, ns_new, ns_cache, t_ns, t_key, t_hash, t_val, t_str, t_alive,
                                   t_rank, scratch, c_hash, c_val, c_ns, oc, err)
                    if oc < 0:
                        return -1
                pos_in += 1
                i = nxt
                continue
            if nw >= 1 and _is_word(buf, words[0, 0], words[0, 1], _CCB):
                return _fail(err, E_CCB_LINE, i, 0, 0)
            if nw > 1:
                return _fail(err, E_LABELS, i, 0, 0)
            if nw == 1:
                if lab_action[ex] >= 0:
                    return _fail(err, E_TWO_LABELS, i, lab_action[ex], 0)
                s, e = words[0, 0], words[0, 1]
                if _colons(buf, s, e, cpos) != 2:
                    return _fail(err, E_LABEL_FORM, i, s, e)
                if not _digits(buf, s, cpos[0]):
                    return _fail(err, E_LABEL_ACTION, i, s, e)
                if _cost_prob(buf, s, e, cpos[0], cpos[1], i, err, res) < 0:
                    return -1
                lab_action[ex] = row - offsets[ex]
                lab_cost[ex] = res[0]
                lab_prob[ex] = res[1]
            if fs < 0 and nw == 0:
                return _fail(err, E_NO_BAR, i, 0, 0)
            if fs >= 0:
                oi = _features(buf, fs, fe, i, ns_tab, ns_new, ns_cache, t_ns, t_key, t_hash, t_val, t_str, t_alive,
                               t_rank, scratch, i_hash, i_val, i_ns, oi, err)
                if oi < 0:
                    return -1
            row += 1
            pos_in += 1
            i_indptr[row] = oi
        else:
            lab_line[ex] = i
            lab_action[ex] = -1
            lab_cost[ex] = 0.0
            lab_prob[ex] = 0.0
            if nw >= 1 and (_is_word(buf, words[0, 0], words[0, 1], _SHARED)
                            or _is_word(buf, words[0, 0], words[0, 1], _CCB)):
                return _fail(err, E_MULTILINE_IN_CB, i, 0, 0)
            if fs < 0:
                return _fail(err, E_NO_BAR, i, 0, 0)
            for w in range(min(nw, words.shape[0])):
                s, e = words[w, 0], words[w, 1]
                nc = _colons(buf, s, e, cpos)
                ae = cpos[0] if nc > 0 else e
                if nc > 2:
                    return _fail(err, E_LABEL_FORM, i, s, e)
                if ae == s or not _digits(buf, s, ae):
                    return _fail(err, E_CB_ACTION, i, s, e)
                a = 0
                for k in range(s, ae):
                    a = a * 10 + (int(buf[k]) - 48)
                    if a > k_check:
                        return _fail(err, E_ACTION_BEYOND, i, s, e)
                if a < 1:
                    return _fail(err, E_CB_ACTION, i, s, e)
                if a > top:
                    top = a
                if nc == 1:
                    ok, cst = parse_number(buf, cpos[0] + 1, e)
                    if ok == 0:
                        return _fail(err, E_LABEL_NUMBERS, i, s, e)
                elif nc == 2:
                    if _cost_prob(buf, s, e, cpos[0], cpos[1], i, err, res) < 0:
                        return -1
                    if lab_action[ex] >= 0:
                        return _fail(err, E_TWO_CHOSEN, i, s, e)
                    lab_action[ex] = a - 1
                    lab_cost[ex] = res[0]
                    lab_prob[ex] = res[1]
            oc = _features(buf, fs, fe, i, ns_tab, ns_new, ns_cache, t_ns, t_key, t_hash, t_val, t_str, t_alive, t_rank,
                           scratch, c_hash, c_val, c_ns, oc, err)
            if oc < 0:
                return -1
            ex += 1
            c_indptr[ex] = oc
        i = nxt
    if adf and in_ex:
        if row == offsets[ex]:
            return _fail(err, E_SHARED_ONLY, lab_line[ex], 0, 0)
        ex += 1
        offsets[ex] = row
        c_indptr[ex] = oc
    counts[0] = oc
    counts[1] = oi
    counts[2] = top
    return ex
