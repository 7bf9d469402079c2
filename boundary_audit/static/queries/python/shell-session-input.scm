; BA202 shell-session-input (Python): commands sent into a persistent shell.

; pexpect: child.sendline(cmd) / child.send(cmd)
(call
  function: (attribute
    object: (_) @sink.session
    attribute: (identifier) @_m)
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "sendline" "send")) @span

; SWE-ReX style: runtime.run_in_session(BashAction(command=cmd))
(call
  function: (attribute
    attribute: (identifier) @_m) @sink.session
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "run_in_session" "send_command_to_session" "execute_in_session")) @span
