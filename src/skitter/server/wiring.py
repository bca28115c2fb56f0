"""The job server's agent, which ``skitter server agent`` (the CLI) runs."""

from skitter.server._agent import Agent

__all__ = [
    "Agent",
]
