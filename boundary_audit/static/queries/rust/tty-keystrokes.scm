; BA203 tty-keystrokes (Rust): ["tmux", "send-keys", ...] argv literals.
((array_expression
   .
   (string_literal) @_tmux
   .
   (string_literal) @_send) @span @sink.argv
  (#match? @_tmux "^\"tmux\"$")
  (#match? @_send "^\"send(-keys)?\"$"))

((macro_invocation
   macro: (identifier) @_m
   (token_tree
     .
     (string_literal) @_tmux
     .
     (string_literal) @_send)) @span @sink.argv
  (#eq? @_m "vec")
  (#match? @_tmux "^\"tmux\"$")
  (#match? @_send "^\"send(-keys)?\"$"))
