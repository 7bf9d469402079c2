; BA202 shell-session-input (Python): commands sent into a persistent shell.

; pexpect: child.sendline(cmd)
(call
  function: (attribute
    object: (_) @sink.session
    attribute: (identifier) @_m)
  arguments: (argument_list . (_) @arg)
  (#eq? @_m "sendline")) @span

; pexpect: child.send(cmd), only when `child` resolves to a spawned process
(call
  function: (attribute
    object: (_) @sink.session-handle
    attribute: (identifier) @_m)
  arguments: (argument_list . (_) @arg)
  (#eq? @_m "send")) @span

; SWE-ReX style: runtime.run_in_session(BashAction(command=cmd))
(call
  function: (attribute
    attribute: (identifier) @_m) @sink.session
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "run_in_session" "send_command_to_session" "execute_in_session")) @span
