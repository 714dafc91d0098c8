"""The HTTP API's wire protocol, shared by the server and :mod:`shiyi.client`.

``schemas`` (request and response models), ``errors`` (the JSON error body and its stable
codes) and ``owner`` (the record a process writes while it owns the data dir and serves it).
The events a run streams are :mod:`shiyi.events`.
"""
