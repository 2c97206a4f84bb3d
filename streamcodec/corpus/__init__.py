"""A corpus for training: many files in, token shards out, exact, resumable, local or on Dask.

    >>> import streamcodec.corpus  # doctest: +SKIP
    >>> streamcodec.corpus.tokenize(["data/"], "tokens/", jobs=2)  # doctest: +SKIP
    >>> for ids in streamcodec.corpus.read_documents("tokens/"): ...  # doctest: +SKIP

Modules, bottom up: ``files`` (an input file checked and decompressed to its proper end),
``inputs`` (files, folders, globs, documents), ``plan`` (which input ranges make each shard),
``shards`` (the ``.npy`` writer), ``manifest``, ``job`` (one shard's work), ``tokenize`` (the
run, resumed), ``cluster`` (the run on Dask) and ``check`` (shards against the manifest and the
inputs). docs/corpus.md has the format and the figures.
"""

from streamcodec.corpus.check import check_corpus
from streamcodec.corpus.tokenize import read_documents, tokenize

__all__ = ["check_corpus", "read_documents", "tokenize"]
