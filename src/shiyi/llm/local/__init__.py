"""The embedded model runtime: a GGUF file run in this process by llama.cpp's server engine.

:mod:`~shiyi.llm.local.model` is the chat model; the engine (:mod:`~shiyi.llm.local.xllama`),
its text format (:mod:`~shiyi.llm.local.grammar`), its weights (:mod:`~shiyi.llm.local.weights`,
:mod:`~shiyi.llm.local.gguf_q8`) and its prompt cache stay behind it; ``python -m
shiyi.llm.local.llama_server`` serves the same engine over HTTP.  Nothing here imports
:mod:`shiyi.llm.openai`.
"""
