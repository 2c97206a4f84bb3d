import time, pygtrie, streamcodec
enc = streamcodec.get_encoding("cl100k_base")
ranks = enc.mergeable_ranks
t=time.process_time()
tr = pygtrie.Trie()
for k, v in ranks.items(): tr[k] = v
print("pygtrie build", time.process_time()-t)
t=time.process_time()
ps = set()
for k in ranks:
    for i in range(1, len(k)+1): ps.add(k[:i])
print("prefix set build", time.process_time()-t, len(ps))
piece = b"antidisestablishmentarianism" * 40
t=time.process_time()
n=0
for i in range(len(piece)):
    n += len(list(tr.prefixes(piece[i:i+130])))
print("pygtrie prefixes per pos us", (time.process_time()-t)/len(piece)*1e6, n)
t=time.process_time()
n=0
for i in range(len(piece)):
    k=i+1
    while piece[i:k] in ps and k <= len(piece):
        if piece[i:k] in ranks: n+=1
        k+=1
print("prefix set per pos us", (time.process_time()-t)/len(piece)*1e6, n)
t=time.process_time()
tk = __import__("tiktoken").Encoding("x", pat_str=enc.pat_str, mergeable_ranks=ranks, special_tokens={})
print("tiktoken ctor", time.process_time()-t)
t=time.process_time()
streamcodec.Encoding("x", pat_str=enc.pat_str, mergeable_ranks=ranks, special_tokens={})
print("ours ctor", time.process_time()-t)
print(max(map(len, ranks)))
