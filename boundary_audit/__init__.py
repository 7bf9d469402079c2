"""boundary-audit: find and measure the parser boundaries between an agent's reply and execve."""

__version__ = "0.1.0"
