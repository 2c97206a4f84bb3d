"""Vocabulary file formats, read and written: each reader names the file and line it rejects.

- :mod:`~streamcodec.formats.tiktoken_file`: tiktoken's ``.tiktoken`` (``base64(token) rank``).
"""

from streamcodec.formats.tiktoken_file import read_tiktoken, write_tiktoken

__all__ = ["read_tiktoken", "write_tiktoken"]
