"""Context engineering: token budget, history window, compression, working memory."""
