"""The script library: scripts the agent wrote and saved to reuse (:mod:`~shiyi.scripts.library`).

Above memory, not in it: a saved script is plain files under the data dir, and memory holds
only the procedural memory that lets recall find it.
"""
