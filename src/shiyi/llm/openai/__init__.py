"""The client of OpenAI-compatible endpoints (OpenAI, DeepSeek, Ollama, vLLM, llama-server...).

:mod:`~shiyi.llm.openai.model` is the chat model; the wire reading
(:mod:`~shiyi.llm.openai.stream`, :mod:`~shiyi.llm.openai.chunks`) and the prices
(:mod:`~shiyi.llm.openai.pricing`) stay behind it.  Nothing here imports
:mod:`shiyi.llm.local`; the ``openai`` SDK is imported lazily.
"""
