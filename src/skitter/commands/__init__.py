"""``ScrapyCommand`` (``scrapy.commands``): the base of a project's own commands
(COMMANDS_MODULE); see ``_command``.
"""

from skitter.commands._command import (
    ScrapyCommand,
)

__all__ = [
    "ScrapyCommand",
]
