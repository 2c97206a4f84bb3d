import time, re, regex, sys
from streamcodec.vocab import CL100K_PATTERN, O200K_PATTERN, GPT2_PATTERN
from tests.corpus import samples
ALL = "".join(map(chr, range(0x10000)))
def ranges(cls):
    out=[]
    for m in regex.finditer(f"(?:{cls})+", ALL):
        a,b=m.span()
        out.append(f"\\u{a:04x}" if a==b-1 else f"\\u{a:04x}-\\u{b-1:04x}")
    return "".join(out)
L=ranges(r"\p{L}"); N=ranges(r"\p{N}"); S=ranges(r"\s")
def ci(s): return "".join("[" + ranges(f"(?i:{regex.escape(c)})") + "]" for c in s)
pat = (f"'(?:{ci('s')}|{ci('d')}|{ci('m')}|{ci('t')}|{ci('ll')}|{ci('ve')}|{ci('re')})|[^\\r\\n{L}{N}]?+[{L}]++|[{N}]{{1,3}}+| ?[^{S}{L}{N}]++[\\r\\n]*+|[{S}]++$|[{S}]*[\\r\\n]|[{S}]+(?![^{S}])|[{S}]")
t4=time.process_time()
rp = re.compile(pat)
print("compile", time.process_time()-t4)
asc = re.compile(r"""'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\w]?+[a-zA-Z]++|[0-9]{1,3}+| ?[^\s\w]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""", re.ASCII)
rx = regex.compile(CL100K_PATTERN)
nonbmp = re.compile("[\U00010000-\U0010ffff]")
def t(f):
    ts=[]
    for _ in range(25):
        a=time.process_time(); f(); ts.append(time.process_time()-a)
    return min(ts)
for name, text in samples().items():
    mb = len(text.encode())/1e6
    print(name, "regex", mb/t(lambda: rx.findall(text)), "re", mb/t(lambda: rp.findall(text)), rx.findall(text)==rp.findall(text), "ascii-re", mb/t(lambda: asc.findall(text)),
      "nonbmp search", mb/t(lambda: nonbmp.search(text)), "utf16", mb/t(lambda: text.encode('utf-16-le','surrogatepass')), sys.getsizeof(text)/len(text))
import tiktoken, streamcodec
from itertools import chain, filterfalse
from collections import OrderedDict, deque
from streamcodec.bpe import merge_piece
enc = streamcodec.get_encoding("cl100k_base")
tk = tiktoken.Encoding("cl100k_base", pat_str=enc.pat_str, mergeable_ranks=enc.mergeable_ranks, special_tokens=enc.special_tokens)
ranks = enc.mergeable_ranks
def encode(text, cache):
    pieces = rp.findall(text)
    uniq = set(pieces)
    missing = list(filterfalse(cache.__contains__, uniq))
    if missing:
        datas = list(map(str.encode, missing))
        toks = list(map(ranks.get, datas))
        for p, d, t in zip(missing, datas, toks):
            cache[p] = (t,) if t is not None else tuple(merge_piece(d, ranks))
    deque(map(cache.move_to_end, uniq), 0)
    return list(chain.from_iterable(map(cache.__getitem__, pieces)))
def encode2(text, cache):
    pieces = rp.findall(text)
    get = cache.get
    got = list(map(get, pieces))
    if None in got:
        missing = set(pieces).difference(cache)
        datas = list(map(str.encode, missing))
        toks = list(map(ranks.get, datas))
        for p, d, t in zip(missing, datas, toks):
            cache[p] = (t,) if t is not None else tuple(merge_piece(d, ranks))
        got = map(cache.__getitem__, pieces)
    return list(chain.from_iterable(got))
for name, text in samples().items():
    mb = len(text.encode())/1e6
    c = OrderedDict()
    assert encode(text, c) == tk.encode_ordinary(text)
    cold = t(lambda: encode(text, OrderedDict()))
    warm = t(lambda: encode(text, c))
    d={}; encode2(text, d)
    cold2 = t(lambda: encode2(text, {}))
    warm2 = t(lambda: encode2(text, d))
    tt = t(lambda: tk.encode_ordinary(text))
    print(name, "tiktoken", mb/tt, "cold", mb/cold, "warm", mb/warm, "dict cold", mb/cold2, "dict warm", mb/warm2)
print("---")
text = samples()["prose"]; mb=len(text)/1e6
pieces = rp.findall(text); c=OrderedDict(); encode(text,c)
print("findall", mb/t(lambda: rp.findall(text)))
print("set", mb/t(lambda: set(pieces)))
print("getitem+chain", mb/t(lambda: list(chain.from_iterable(map(c.__getitem__, pieces)))))
print("move", mb/t(lambda: deque(map(c.move_to_end, set(pieces)), 0)))
print("tiktoken", mb/t(lambda: tk.encode_ordinary(text)))
print("---")
from operator import itemgetter
from array import array
print("getitem+chain", mb/t(lambda: list(chain.from_iterable(map(c.__getitem__, pieces)))))
print("itemgetter+chain", mb/t(lambda: list(chain.from_iterable(itemgetter(*pieces)(c)))))
d = dict(c)
print("dict getitem+chain", mb/t(lambda: list(chain.from_iterable(map(d.__getitem__, pieces)))))
print("dict itemgetter+chain", mb/t(lambda: list(chain.from_iterable(itemgetter(*pieces)(d)))))
b = {k: array('I', v).tobytes() for k, v in d.items()}
print("bytes join", mb/t(lambda: array('I', b"".join(map(b.__getitem__, pieces))).tolist()))
print("bytes join itemgetter", mb/t(lambda: array('I', b"".join(itemgetter(*pieces)(b))).tolist()))
print("only map list", mb/t(lambda: list(map(d.__getitem__, pieces))))
