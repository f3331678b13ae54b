"""SPELLING: how one op is written in each output language.

``cpp`` spells the TORCH_LIBRARY wrapper, ``python`` the legacy shim function
and its stub.  Each is a small frozen type with ``decl()`` / ``call()``
methods; nothing here knows which file the text ends up in.
"""
