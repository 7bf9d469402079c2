; BA203 tty-keystrokes (shell scripts): `tmux send-keys -t s "$x" Enter`.
((command
   name: (command_name (word) @_prog)
   argument: (word) @_sub) @span @sink.argv
  (#eq? @_prog "tmux")
  (#any-of? @_sub "send-keys" "send"))
