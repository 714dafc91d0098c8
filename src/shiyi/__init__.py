"""shiyi: an agent runtime with a real long-term memory."""

__version__ = "0.1.0"
