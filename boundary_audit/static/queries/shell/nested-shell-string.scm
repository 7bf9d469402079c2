; BA102 nested-shell-string (shell scripts): quoted strings that launch a second parser.
([(string) (raw_string)] @span
  (#match? @span "(^|[^A-Za-z0-9_./-]|/bin/)((ba|z|da|k|a)?sh\\s+(-[A-Za-z]+\\s+)*-[A-Za-z]*c|ssh|eval|docker\\s+exec|podman\\s+exec|kubectl\\s+exec|tmux\\s+send-keys|su\\s+.*-c)($|[^A-Za-z0-9_-])"))
