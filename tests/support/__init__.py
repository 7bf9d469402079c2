"""Test support: fixtures that start real components and stop them.

The components: git daemon, sshd, dockerd, tmux.
"""
