"""Chat exports of other assistants (ChatGPT, Claude) read as importable conversations.

Each format module turns one export file's parsed JSON into
:class:`~shiyi.memory.transfer.importers.ImportedConversation` s through :func:`turns.conversation`,
so every format names sessions, runs and ids the same way.
"""
