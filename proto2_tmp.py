import time, re, regex
from tests.corpus import samples
text = samples()["code"]
mb=len(text)/1e6
def t(f):
    ts=[]
    for _ in range(3):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    return min(ts)
ALL = "".join(map(chr, range(0x110000)))
def ranges(cls, hi=0x110000):
    out=[]
    for m in regex.finditer(f"(?:{cls})+", ALL[:hi]):
        a,b=m.span()
        out.append(f"\\U{a:08x}" if a==b-1 else f"\\U{a:08x}-\\U{b-1:08x}")
    return "".join(out)
for hi in [128, 0x10000, 0x110000]:
    L=ranges(r"\p{L}",hi)
    for p in [f"[{L}]+", f"[^{L}]+", f"[{L}]++", f" ?[{L}]++|[^{L}]"]:
        rp=re.compile(p)
        print(hi, p[:10], len(rp.findall(text)), mb/t(lambda: rp.findall(text)))
