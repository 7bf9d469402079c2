"""Test support: fixtures that start real components (git daemon, sshd, dockerd, tmux) and stop them."""
