"""The command-line jobs: ``zero mnist`` and ``zero gpt prepare|train|sample``."""
