"""In-sandbox driver programs: the live half of the session, tmux and ssh transports.

Each driver is a stdlib-only script run *inside* the sandbox as
`[sys.executable, "-E", "-s", "-S", <path>/<driver>.py]` (see `transports/_driver.py`). It
reads one JSON request on stdin (the replies and the mechanism's parameters), starts the
machinery (an interactive bash on a pty, a tmux server on a private socket, an sshd on the
sandbox's loopback), pushes each reply through it, waits for the mechanism's own completion
signal, kills everything it started, and prints one JSON response on stdout. They are scripts,
not modules of this package, so that a sandbox needs only the interpreter and this directory.
"""
