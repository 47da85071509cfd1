"""The pure compute pipeline: candidates -> scores -> limits -> Markdown."""
