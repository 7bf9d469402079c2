; BA203 tty-keystrokes (Python): keys typed into a terminal.

; libtmux: pane.send_keys(cmd, enter=True)
(call
  function: (attribute
    attribute: (identifier) @_m) @sink.tty
  arguments: (argument_list . (_) @arg)
  (#eq? @_m "send_keys")) @span

; an argv literal ["tmux", "send-keys", ...]
((list
   .
   (string) @_tmux
   .
   (string) @_send) @span @sink.argv
  (#match? @_tmux "^[\"'](/usr)?(/bin/)?tmux[\"']$")
  (#match? @_send "^[\"']send(-keys)?[\"']$"))
