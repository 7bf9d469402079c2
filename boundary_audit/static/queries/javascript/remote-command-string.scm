; BA401 remote-command-string (JavaScript/TypeScript): commands run by a remote shell or sandbox.

; ssh2: conn.exec(cmd, cb); node-ssh: ssh.execCommand(cmd)
(call_expression
  function: (member_expression
    object: (_) @_recv
    property: (property_identifier) @_m) @sink.remote
  arguments: (arguments . (_) @arg)
  (#any-of? @_m "exec" "execCommand")
  (#match? @_recv "(^|[._])(conn|connection|ssh|sshClient|client|remote)$")) @span

; sandbox APIs: sandbox.commands.run(cmd), sandbox.process.executeCommand(cmd), sandbox.exec(cmd)
(call_expression
  function: (member_expression
    object: (_) @_recv
    property: (property_identifier) @_m) @sink.remote
  arguments: (arguments . (_) @arg)
  (#any-of? @_m "run" "exec" "executeCommand" "runCommand" "execCommand")
  (#match? @_recv "(sandbox|sbx|devbox|runtime|workspace)(\\.commands|\\.process)?$")) @span

; dockerode: container.exec({Cmd: [...]})
(call_expression
  function: (member_expression
    property: (property_identifier) @_m) @sink.remote-argv
  arguments: (arguments
    (object
      (pair
        key: (property_identifier) @_k
        value: (_) @arg)))
  (#eq? @_m "exec")
  (#eq? @_k "Cmd")) @span
