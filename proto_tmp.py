import time, re, regex, sys
from streamcodec.vocab import CL100K_PATTERN, O200K_PATTERN, GPT2_PATTERN
from tests.corpus import samples
t0=time.perf_counter()
ALL = "".join(map(chr, range(0x110000)))
t1=time.perf_counter()
def ranges(cls):
    out=[]
    for m in regex.finditer(f"(?:{cls})+", ALL):
        a,b=m.span()
        out.append(f"\\U{a:08x}" if a==b-1 else f"\\U{a:08x}-\\U{b-1:08x}")
    return "".join(out)
L=ranges(r"\p{L}"); N=ranges(r"\p{N}"); S=ranges(r"\s")
t2=time.perf_counter()
print("ALL", t1-t0, "classes", t2-t1, len(L), len(N), len(S))
print(S)
def ci(s): return "".join("[" + ranges(f"(?i:{regex.escape(c)})") + "]" for c in s)
t3=time.perf_counter()
print([ci(c) for c in "sdmtlvre"], time.perf_counter()-t3)
pat = (f"'(?:{ci('s')}|{ci('d')}|{ci('m')}|{ci('t')}|{ci('ll')}|{ci('ve')}|{ci('re')})|[^\\r\\n{L}{N}]?+[{L}]++|[{N}]{{1,3}}+| ?[^{S}{L}{N}]++[\\r\\n]*+|[{S}]++$|[{S}]*[\\r\\n]|[{S}]+(?![^{S}])|[{S}]")
t4=time.perf_counter()
rp = re.compile(pat)
print("compile", time.perf_counter()-t4)
rx = regex.compile(CL100K_PATTERN)
for name, text in samples().items():
    mb = len(text.encode())/1e6
    def t(f):
        ts=[]
        for _ in range(3):
            a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
        return min(ts)
    print(name, "regex", mb/t(lambda: rx.findall(text)), "re", mb/t(lambda: rp.findall(text)), rx.findall(text)==rp.findall(text))
