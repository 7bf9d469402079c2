; BA203 tty-keystrokes (JavaScript/TypeScript): keys typed into a terminal.

; node-pty: term.write(cmd + "\r") (the receiver must be a pty handle)
(call_expression
  function: (member_expression
    object: (_) @sink.pty
    property: (property_identifier) @_m)
  arguments: (arguments . (_) @arg)
  (#eq? @_m "write")) @span

; an argv literal ["tmux", "send-keys", ...]
((array
   .
   (string) @_tmux
   .
   (string) @_send) @span @sink.argv
  (#match? @_tmux "^[\"'](/usr)?(/bin/)?tmux[\"']$")
  (#match? @_send "^[\"']send(-keys)?[\"']$"))
