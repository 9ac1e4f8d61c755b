"""Character-level GPT: prepare a text, train, sample. (Coming with the GPT issue.)"""
from __future__ import annotations


def add_arguments(parser) -> None:
    parser.set_defaults(run=lambda args: print("zero gpt: not implemented yet") or 1)
