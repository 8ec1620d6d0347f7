"""Reports of a run: the console, the Markdown evidence and its freshness check."""
