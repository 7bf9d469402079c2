; BA203 tty-keystrokes (Go): []string{"tmux", "send-keys", ...} argv literals.
((composite_literal
   type: (slice_type)
   body: (literal_value
     .
     (literal_element (interpreted_string_literal) @_tmux)
     .
     (literal_element (interpreted_string_literal) @_send))) @span @sink.argv
  (#eq? @_tmux "\"tmux\"")
  (#match? @_send "^\"send(-keys)?\"$"))
