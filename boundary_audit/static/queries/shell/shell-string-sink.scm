; BA101 shell-string-sink (shell scripts): commands that run a string through a shell.
; The argv is classified: `bash -c "$x"`, `sh -c`, `eval "$x"`, `su -c`, wrapped by sudo/env/timeout.
((command
   name: (command_name (word) @_prog)) @span @sink.argv
  (#match? @_prog "^((/usr)?(/local)?/bin/)?(bash|sh|zsh|dash|ksh|ash|eval|su|runuser|sudo|doas|env|timeout|nohup|nice|setsid|exec)$"))
